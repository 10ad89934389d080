"""The madengine model of a tool: a command prefix, env vars, pre/post scripts, an output dir.

Built-in kinds that wrap a profiler build on `WrapperTool` and override `prefix`, `setup`
and `teardown`; the generic `command` kind is `WrapperTool` itself.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from gpuscope.errors import ToolError
from gpuscope.tools.config import Script, ToolConfig, counters_dir, expand
from gpuscope.tools.tool import Layer, Notes, RunContext


def placeholders(ctx: RunContext) -> dict[str, str]:
    return {"run_dir": str(ctx.run_dir), "run_id": ctx.run_id, "counters": str(counters_dir())}


def expand_all(items: Sequence[str], ctx: RunContext) -> tuple[str, ...]:
    values = placeholders(ctx)
    return tuple(expand(item, values) for item in items)


def missing(program: str, config: ToolConfig) -> ToolError:
    """The standard "cannot work" message: what is missing, how to get it, how to go on."""
    install = config.options.get("install", f"install {program}")
    return ToolError(f"{program} not found on PATH: {install}, or drop the {config.name} tool")


class WrapperTool:
    """Prefix the command with `cmd`, add `env_vars`, run pre/post scripts, own `outputs`.

    A profiler that writes into a folder of the run directory names it in `output_dir`: it is
    created in setup, `reports()` lists what the profiler left there, and after every tool has
    torn down the folder is analysed into `analysis.json` (`analyze_output`).
    """

    output_dir = ""
    analyze_output = False

    def __init__(self, config: ToolConfig) -> None:
        self.config = config
        self.name = config.name

    def prefix(self, ctx: RunContext) -> tuple[str, ...]:
        return expand_all(self.config.cmd, ctx)

    def env(self, ctx: RunContext) -> dict[str, str]:
        values = placeholders(ctx)
        return {key: expand(value, values) for key, value in self.config.env_vars.items()}

    def check(self, ctx: RunContext) -> None:
        argv = self.prefix(ctx)
        if argv and ctx.which(argv[0]) is None:
            raise missing(argv[0], self.config)
        for script in (*self.config.pre_scripts, *self.config.post_scripts):
            if not Path(script.path).is_file():
                raise ToolError(f"{self.name}: script {script.path} does not exist")

    @contextmanager
    def open(self, ctx: RunContext) -> Iterator[Layer]:
        self.setup(ctx)
        try:
            yield Layer(tool=self.name, argv=self.prefix(ctx), env=self.env(ctx))
        finally:
            self.teardown(ctx)

    def reports(self, ctx: RunContext, pattern: str) -> list[Path]:
        """Files matching `pattern` in `output_dir`; a warning in the manifest when none."""
        found = sorted((ctx.run_dir / self.output_dir).glob(pattern))
        if not found:
            ctx.notes.warn(f"{self.name}: no {pattern} under {self.output_dir}/")
        return found

    def setup(self, ctx: RunContext) -> None:
        if self.output_dir:
            (ctx.run_dir / self.output_dir).mkdir(exist_ok=True)
        for output in self.config.outputs:
            if output.endswith("/"):
                (ctx.run_dir / output).mkdir(parents=True, exist_ok=True)
        for script in self.config.pre_scripts:
            code = run_script(script, ctx)
            if code != 0:
                raise ToolError(f"{self.name}: pre-script {script.path} exited with {code}")

    def teardown(self, ctx: RunContext) -> None:
        for script in self.config.post_scripts:
            code = run_script(script, ctx)
            if code != 0:
                ctx.notes.warn(f"{self.name}: post-script {script.path} exited with {code}")
        if self.analyze_output and self.output_dir:
            folder, notes, name = ctx.run_dir / self.output_dir, ctx.notes, self.name
            notes.defer(f"analyze {self.output_dir}", lambda: _analyze(folder, notes, name))


def _analyze(folder: Path, notes: Notes, tool: str) -> None:
    from gpuscope.tools.outputs import analyze_folder

    analyze_folder(folder, notes, tool)


def run_script(script: Script, ctx: RunContext) -> int:
    """A pre/post script with the run directory in its environment; output goes to ours."""
    path = script.path
    interpreter = {".sh": ["bash"], ".py": [sys.executable]}.get(Path(path).suffix, [])
    env = {**ctx.base_env, "GPUSCOPE_RUN_DIR": str(ctx.run_dir), "GPUSCOPE_RUN_ID": ctx.run_id}
    argv = [*interpreter, path, *expand_all(script.args, ctx)]
    return subprocess.run(argv, env=env, check=False).returncode


def run_logged(
    argv: Sequence[str], log: Path, env: Mapping[str, str], stdout: Path | None = None
) -> int:
    """A teardown helper (an exporter): stderr (and stdout unless redirected) to `log`."""
    with log.open("ab") as err:
        out = stdout.open("wb") if stdout is not None else err
        try:
            return subprocess.run(
                list(argv), stdout=out, stderr=err, env=dict(env), check=False
            ).returncode
        finally:
            if stdout is not None:
                out.close()
