"""`gpuscope completion bash|zsh|fish` (issue 21.5): the scripts parse, and the bash one
completes commands, options, choices and paths by itself (no gpuscope process on Tab)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def script(shell: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    argv = [sys.executable, "-m", "gpuscope", "completion", shell]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout


def complete(source: Path, *words: str, cwd: Path) -> list[str]:
    words_set = f"COMP_WORDS=({' '.join(repr(w) for w in words)}); COMP_CWORD={len(words) - 1}"
    probe = f"source {source}; {words_set}; _gpuscope; printf '%s\\n' \"${{COMPREPLY[@]}}\""
    done = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, cwd=cwd,
                          timeout=30, env={"PATH": "/usr/bin:/bin"})  # fmt: skip
    assert done.returncode == 0, done.stderr
    return [w for w in done.stdout.splitlines() if w]


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
def test_bash_completes_commands_options_choices_and_paths(tmp_path: Path) -> None:
    source = tmp_path / "gpuscope.bash"
    source.write_text(script("bash"))
    (tmp_path / "trace.json.gz").write_bytes(b"")
    assert complete(source, "gpuscope", "an", cwd=tmp_path) == ["analyze"]
    assert "schema" in complete(source, "gpuscope", "", cwd=tmp_path)
    assert complete(source, "gpuscope", "analyze", "--eng", cwd=tmp_path) == [
        "--engine", "--engine-timeout"]  # fmt: skip
    assert complete(source, "gpuscope", "analyze", "--engine", "", cwd=tmp_path) == [
        "local", "ray", "dask"]  # fmt: skip
    assert complete(source, "gpuscope", "analyze", "tr", cwd=tmp_path) == ["trace.json.gz"]
    assert complete(source, "gpuscope", "analyze", "--top", "", cwd=tmp_path) == []
    assert complete(source, "gpuscope", "completion", "", cwd=tmp_path) == ["bash", "zsh", "fish"]


def test_zsh_and_fish_scripts() -> None:
    zsh = script("zsh")
    assert "bashcompinit" in zsh and "complete -o filenames" in zsh
    fish = script("fish")
    assert "complete -c gpuscope -n __fish_use_subcommand -a analyze" in fish
    assert "-l engine -x -a 'local ray dask'" in fish
    if shutil.which("zsh"):
        assert subprocess.run(["zsh", "-n"], input=zsh, text=True, timeout=30).returncode == 0
    if shutil.which("fish"):
        done = subprocess.run(["fish", "--no-execute"], input=fish, text=True, timeout=30)
        assert done.returncode == 0
