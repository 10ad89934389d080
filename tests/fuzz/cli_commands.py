"""Random command lines for the CLI mode: a subcommand, its flags, its inputs (good or damaged
copies of the seeds) and its outputs (every kind of target, `cli_targets`), as a `Plan`.

`plan(case, seeds, folder)` is deterministic in the case: the same command line and the same
files are made again by `--replay COMMAND:NUMBER`.
"""

from __future__ import annotations

import dataclasses
import os
import shlex
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tests.fuzz.cli_seeds import CliSeeds
from tests.fuzz.cli_targets import (
    EITHER,
    REFUSE,
    WRITE,
    Output,
    Room,
    dir_target,
    file_target,
)
from tests.fuzz.mutate import mutate
from tests.fuzz.runner import Case
from tests.fuzz.seeds import Seed, claimed_files

# how often each command is drawn
WEIGHTS = {
    "analyze": 30,
    "export": 12,
    "diff": 10,
    "counters": 10,
    "libtrace": 10,
    "libperf": 10,
    "run": 8,
    "doctor": 4,
    "bench": 3,
    "profile": 3,
}
# the run command's own program: (argv, exit status, stderr lines it prints)
PROGRAMS = (
    (["true"], 0, ()),
    (["sh", "-c", "exit 3"], 3, ()),
    (["sh", "-c", "echo out; echo err >&2; exit 5"], 5, ("err",)),
    (["sh", "-c", "printf x > made-by-command.txt"], 0, ()),
    (["sh", "-c", "sleep 30 & exit 0"], 0, ()),  # leaves a process behind: ORPHAN
)
ORPHAN = PROGRAMS[-1]  # with orphans=False, `true` instead: `run`'s process hygiene
DEVICES = ("dev-null", "private-null", "dev-full")  # character devices: shareable
ODD_FOLDER = "in put\n\x1b[2J"  # an input folder name with a space, a line end, an escape
SCRIPT = "def f():\n    return lambda: None\n"
PEAKS = '{"tflops": {"fp32": 81.7}, "bandwidth_gbs": 5300}\n'
RULES = '{"kernel_rules": [{"category": "gemm", "pattern": "gemm|Cijk"}]}\n'


@dataclass
class Plan:
    command: str
    argv: list[str]  # after `gpuscope`
    outputs: list[Output]
    stdout: str = "pipe"  # "pipe", "closed" (its reader went away) or "full" (/dev/full)
    no_dac: bool = False  # as root: without CAP_DAC_OVERRIDE / CAP_DAC_READ_SEARCH
    exits: tuple[int, ...] = (0, 2)
    free_stderr: bool = False  # stderr carries a report besides gpuscope's lines
    stderr_lines: tuple[str, ...] = ()  # other lines stderr may carry (run's program)
    fake_bin: bool = False  # tests/fakes/bin first on PATH (libperf's vendor benchmarks)
    damage: list[str] = field(default_factory=list)
    seeds: list[str] = field(default_factory=list)
    may_create: list[str] = field(default_factory=list)  # files besides the outputs

    def shown(self) -> str:
        """The command line as bash takes it (a word with control characters or bytes that are
        not UTF-8 in $'…' quotes)."""
        return " ".join(_shell_word(word) for word in ["gpuscope", *self.argv])


def _shell_word(word: str) -> str:
    raw = os.fsencode(word)
    if all(32 <= c < 127 for c in raw):
        return shlex.quote(word)
    return (
        "$'"
        + "".join(chr(c) if 32 <= c < 127 and c not in b"'\\" else f"\\x{c:02x}" for c in raw)
        + "'"
    )


def plan(case: Case, seeds: CliSeeds, folder: Path, orphans: bool = True) -> Plan:
    """The command line of `case` (`case.format` is the subcommand), its files made under
    `folder`, which is the command's working directory. `orphans`: `run` may be given a
    program that leaves a process behind (gpuscope run must end it)."""
    builder = _Builder(case, seeds, folder)
    builder.orphans = orphans
    BUILDERS[case.format](builder)
    return builder.finish()


def draw_commands(seed: int, start: int, count: int) -> list[Case]:
    """`count` cases numbered from `start`, each of a command drawn by WEIGHTS."""
    import random

    names, weights = list(WEIGHTS), list(WEIGHTS.values())
    return [
        Case(random.Random(f"{seed}/cli/{n}").choices(names, weights)[0], n, seed)
        for n in range(start, start + count)
    ]


class _Builder:
    def __init__(self, case: Case, seeds: CliSeeds, folder: Path) -> None:
        self.rng = case.rng()
        self.seeds = seeds
        self.room = Room(folder, self.rng)
        self.plan = Plan(case.format, [case.format], [])
        self.plan.stdout = self.rng.choices(("pipe", "closed", "full"), (86, 7, 7))[0]
        self.orphans = True

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def flag(self, option: str, p: float, *values: object) -> None:
        """`option` with probability p, with a value drawn from `values` (none: a switch)."""
        if not self.chance(p):
            return
        self.plan.argv.append(option)
        if values:
            self.plan.argv.append(str(self.rng.choice(values)))

    # -- inputs --------------------------------------------------------------------------------

    def trace(self, seeds: list[Seed], damage: float = 0.4) -> str:
        seed = self.rng.choice(seeds)
        self.plan.seeds.append(seed.label)
        return self.copy(seed.path, damage)

    def copy(self, source: Path, damage: float, name: str = "") -> str:
        """A copy of `source` (a file or a folder) in the case's folder, maybe damaged or
        unreadable; the argument that names it."""
        holder = self.room.folder / self.room.fresh(ODD_FOLDER if self.chance(0.08) else "in")
        if self.chance(0.04):
            holder = Path(os.fsdecode(os.fsencode(holder) + b"\xff"))
        holder.mkdir()
        target = holder / (name or source.name)
        if source.is_dir():
            shutil.copytree(source, target)
            self.room.input_dirs.append(target)
            files = claimed_files(target) or sorted(p for p in target.iterdir() if p.is_file())
        else:
            shutil.copyfile(source, target)
            self.room.inputs.append(target)
            files = [target]
        if files and self.chance(damage):
            self.plan.damage.append(mutate(self.rng.choice(files), self.rng, locks=False).name)
        if files and self.chance(0.04):
            self.rng.choice(files).chmod(0)
            self.room.no_dac = True
            self.plan.damage.append("unreadable")
        return self.name(target)

    def text(self, text: str, name: str, damage: float) -> str:
        """A small input file of `text`, maybe damaged."""
        source = self.room.folder / self.room.fresh(".source")
        source.write_text(text)
        given = self.copy(source, damage, name)
        source.unlink()
        return given

    def name(self, path: Path) -> str:
        """How the command line names `path`: relative, absolute or through a symbolic link."""
        roll = self.rng.random()
        if roll < 0.1:
            link = self.room.folder / self.room.fresh("input-via-link")
            link.symlink_to(path)
            return link.name
        return str(path) if roll < 0.35 else self.room.relative(path)

    # -- outputs ------------------------------------------------------------------------------

    def output(self, option: str, ext: str, format: str, p: float = 1.0) -> None:
        if self.chance(p):
            out = file_target(self.room, option, ext, format)
            self.plan.outputs.append(out)
            self.plan.argv += [option, out.given]
            if format == "md" and out.path:  # its figures, in a folder beside it named after it
                given = Path(os.path.join(self.room.folder, out.given))
                self.plan.may_create.append(str(given.with_name(f"{given.stem}_figures")))

    def output_dir(self, option: str, p: float = 1.0) -> None:
        if self.chance(p):
            out = dir_target(self.room, option)
            self.plan.outputs.append(out)
            self.plan.argv += [option, out.given]

    def implicit(self, option: str, path: Path, format: str) -> None:
        """An output the command writes where no option names it (a default)."""
        out = Output(option, "", "default", WRITE, format, path=str(path))
        if path.is_dir() or _is_input(self.room, path):
            out = dataclasses.replace(out, expect=EITHER)
        self.plan.outputs.append(out)

    def finish(self) -> Plan:
        self._maybe_duplicate()
        self._shared_targets()
        self.plan.no_dac = self.room.no_dac
        return self.plan

    def _maybe_duplicate(self) -> None:
        """Two options naming one target (the same spelling)."""
        named = [(i, o) for i, o in enumerate(self.plan.outputs) if o.given]
        if len(named) < 2 or not self.chance(0.12):
            return
        (_, first), (j, second) = self.rng.sample(named, 2)
        argv = self.plan.argv
        at = next(k for k in range(1, len(argv)) if argv[k - 1] == second.option)
        argv[at] = first.given
        self.plan.outputs[j] = dataclasses.replace(
            first, option=second.option, format=second.format, kind=f"duplicate:{first.kind}"
        )

    def _shared_targets(self) -> None:
        """Outputs that are one target must be refused, unless a character device (which can
        take any number of outputs): `-` and /dev/stdout are both standard output."""
        keys = [_target_key(o) for o in self.plan.outputs]
        shared = {k for k in keys if k and keys.count(k) > 1}
        self.plan.outputs = [
            dataclasses.replace(o, expect=REFUSE) if k in shared else o
            for o, k in zip(self.plan.outputs, keys, strict=True)
        ]


def _target_key(out: Output) -> str:
    """What names one target: standard output's spellings are one; devices are never shared."""
    if not out.given or out.kind.removeprefix("duplicate:") in DEVICES:
        return ""
    return "stdout" if out.stream == "stdout" else out.given


def _is_input(room: Room, path: Path) -> bool:
    return any(path == p for p in room.inputs)


# -- the commands ----------------------------------------------------------------------------


def _all_traces(seeds: CliSeeds) -> list[Seed]:
    return [s for group in seeds.traces.values() for s in group]


def _analyze(b: _Builder) -> None:
    count = b.rng.choices((1, 2, 3), (7, 2, 1))[0]
    b.plan.argv += [b.trace(_all_traces(b.seeds)) for _ in range(count)]
    b.flag("-q", 0.5)
    b.flag("--top", 0.3, 1, 3, 50, 0, -2)
    b.flag("--skip-bad", 0.2)
    b.flag("--workers", 0.2 if count > 1 else 0.05, 1, 2, 0)
    if b.chance(0.15):
        b.plan.argv += ["--categories", b.text(RULES, "rules.json", 0.5)]
    b.output("--json", "json", "json", 0.5)
    b.output("--md", "md", "md", 0.35)
    b.output("--html", "html", "html", 0.3)
    b.output("--perfetto", b.rng.choice(("json", "json.gz")), "perfetto", 0.25)


def _diff(b: _Builder) -> None:
    seeds = _all_traces(b.seeds)
    b.plan.argv += [b.trace(seeds, 0.3), b.trace(seeds, 0.3)]
    b.flag("-q", 0.5)
    if b.chance(0.1):
        b.plan.argv += ["--categories", b.text(RULES, "rules.json", 0.5)]
    b.output("--json", "json", "json", 0.5)
    b.output("--md", "md", "md", 0.4)
    b.output("--html", "html", "html", 0.3)


def _export(b: _Builder) -> None:
    count = b.rng.choices((1, 2), (8, 2))[0]
    b.plan.argv += [b.trace(_all_traces(b.seeds)) for _ in range(count)]
    b.flag("--skip-bad", 0.2)
    b.flag("--no-samplers", 0.2)
    b.flag("--counter-tracks", 0.2, 0, 3, -1)
    b.output("-o", b.rng.choice(("json", "json.gz")), "perfetto")


def _counters(b: _Builder) -> None:
    mode = b.rng.choices(("analyse", "plan", "list"), (7, 2, 1))[0]
    if mode == "list":
        b.plan.argv += ["--list", b.rng.choice(("gfx942", "gfx90a", "gfx1151", "sm_90", "x"))]
        return
    if mode == "plan":
        sets = ("roofline", "memory", "compute", "all", "SQ_WAVES,GRBM_COUNT")
        what = b.text("pmc: SQ_WAVES GRBM_COUNT\n", "input.txt", 0.4) if b.chance(0.2) else None
        b.plan.argv += ["--plan", what or b.rng.choice(sets)]
        b.flag("--arch", 0.95, "gfx942", "gfx90a", "sm_90", "gfx9999")
        b.output("-o", "txt", "text", 0.7)
        return
    count = b.rng.choices((1, 2), (8, 2))[0]
    b.plan.argv += [b.trace(b.seeds.counter_traces()) for _ in range(count)]
    b.flag("--arch", 0.3, "gfx942", "gfx90a", "sm_90", "gfx9999")
    b.flag("--device", 0.1, "AMD Instinct MI300X", "NVIDIA H100 80GB HBM3")
    if b.chance(0.2):
        b.plan.argv += ["--peaks", b.text(PEAKS, "peaks.json", 0.5)]
    b.flag("-q", 0.5)
    b.output("--json", "json", "json", 0.5)
    b.output("--md", "md", "md", 0.35)
    b.output("--html", "html", "html", 0.3)


def _libtrace(b: _Builder) -> None:
    logs = list(b.seeds.logs)
    if b.chance(0.2):
        folder = b.room.folder / b.room.fresh("logs")
        folder.mkdir()
        for log in b.rng.sample(logs, min(3, len(logs))):
            shutil.copyfile(log, folder / log.name)
        b.plan.seeds.append(f"a folder of {len(list(folder.iterdir()))} logs")
        b.plan.argv.append(b.copy(folder, 0.4))
        shutil.rmtree(folder)
    else:
        for log in b.rng.sample(logs, b.rng.choice((1, 1, 2, 3))):
            b.plan.seeds.append(log.name)
            b.plan.argv.append(b.copy(log, 0.4))
    b.flag("--jobid", 0.2, "7", "", "a b", "x\ny")
    b.flag("--model", 0.2, "bert", "", "m\x1b[2J")
    if b.chance(0.8):
        b.output("-o", "csv", "csv")
    else:
        b.implicit("-o", b.room.folder / "library_trace.csv", "csv")


def _libperf(b: _Builder) -> None:
    source = b.rng.choice(b.seeds.library_traces)
    b.plan.seeds.append(str(source.parent.name) + "/library_trace.csv")
    folder = b.chance(0.15)  # a run directory holding library_trace.csv
    given = b.copy(source.parent if folder else source, 0.4)
    b.plan.argv.append(given)
    # the default output: beside the input as named (a link's folder, not its target's)
    where = b.room.folder / given
    beside = Path(os.path.realpath(where if folder else where.parent)) / "library_perf.csv"
    b.flag("--backends", 0.8, "vendor", "vendor", "torch", "torch,vendor", "bogus")
    b.plan.fake_bin = b.chance(0.3)
    b.plan.argv += ["--timeout-s", "2"]
    b.flag("--limit", 0.3, 2, 0, -1)
    b.flag("--no-measure-peaks", 0.5)
    if b.chance(0.7):
        b.output("-o", "csv", "csv")
    else:
        b.implicit("-o", beside, "csv")
    b.output("--json", "json", "json", 0.4)
    b.output("--md", "md", "md", 0.4)
    b.plan.free_stderr = any(o.stream == "stdout" for o in b.plan.outputs)  # the report


def _script(b: _Builder) -> str:
    script = b.text(SCRIPT, "bench_me.py", 0.2)
    b.plan.may_create.append(str(b.room.inputs[-1].parent / "__pycache__"))  # Python's import
    return f"{script}:{b.rng.choice(('f', 'f', 'f', 'missing'))}"


def _bench(b: _Builder) -> None:
    b.plan.argv += [_script(b), "--mode", "cpu", "--budget", "0.02", "--no-peaks"]
    if b.chance(0.1):
        b.plan.argv += ["--baseline", b.text('{"schema": "gpuscope.bench/1"}', "base.json", 0.5)]
        if b.chance(0.5):
            b.plan.argv += ["--fail-if-slower", "5"]
            b.plan.exits = (0, 1, 2)  # a gate
    b.output("--json", "json", "json", 0.8)
    b.plan.free_stderr = any(o.stream == "stdout" for o in b.plan.outputs)  # the view goes there


def _profile(b: _Builder) -> None:
    b.plan.argv += [_script(b), "--iterations", "1", "--warmup", "0"]
    b.flag("-q", 0.3)
    b.output("--md", "md", "md", 0.6)
    b.output("--html", "html", "html", 0.4)
    b.output_dir("--out", 0.2)


def _doctor(b: _Builder) -> None:
    b.flag("--all", 0.3)
    if b.chance(0.4):
        config = b.rng.choice(b.seeds.tools_configs)
        b.plan.seeds.append(config.name)
        b.plan.argv += ["--tools-config", b.copy(config, 0.4)]
    b.output("--json", "json", "json", 0.85)


def _run(b: _Builder) -> None:
    drawn = b.rng.choice(PROGRAMS)
    program, code, lines = drawn if b.orphans or drawn is not ORPHAN else PROGRAMS[0]
    b.plan.exits = tuple(sorted({code, 2}))
    b.plan.stderr_lines = lines
    b.plan.may_create.append(str(b.room.folder / "made-by-command.txt"))
    if b.chance(0.15):
        context = b.rng.choice(b.seeds.contexts)
        b.plan.seeds.append(context.name)
        b.plan.argv += ["--additional-context-file", b.copy(context, 0.4)]
    b.flag("--additional-context", 0.1, '{"tools": []}', "{bad", '{"tools": [{"name": "x"}]}')
    if b.chance(0.1):
        config = b.rng.choice(b.seeds.tools_configs)
        b.plan.argv += ["--tools-config", b.copy(config, 0.5)]
    b.flag("--tools", 0.05, "nope", "")
    b.flag("--quiet", 0.3)
    b.flag("--model", 0.2, "bert", "m\x1b[2J")
    b.flag("--kill-after", 0.2, 5, 0, -1)
    if b.chance(0.85):
        b.output_dir("--output-dir")
    else:
        b.implicit("--output-dir", b.room.folder / "gpuscope-runs", "dir")
    b.plan.argv += ["--", *program]
    b.plan.free_stderr = b.plan.stdout != "pipe"  # the program's own complaint (echo: I/O error)


BUILDERS: dict[str, Callable[[_Builder], None]] = {
    "analyze": _analyze,
    "diff": _diff,
    "export": _export,
    "counters": _counters,
    "libtrace": _libtrace,
    "libperf": _libperf,
    "bench": _bench,
    "profile": _profile,
    "doctor": _doctor,
    "run": _run,
}
