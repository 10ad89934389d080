"""Where a result came from: time, commit, branch, host, GPUs, driver, ROCm / CUDA / PyTorch and
gpuscope versions — found cheaply (git, /proc and sysfs via the caller's host probe, package
metadata: nothing heavy is imported).

    >>> ctx = collect(host=detect_host(use_nvml=False), tags=("nightly",))   # doctest: +SKIP
    >>> ctx.commit, ctx.dirty, ctx.gpu_model                                # doctest: +SKIP
    ('3f2c…', False, 'NVIDIA H100 80GB HBM3')
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol

from gpuscope._version import __version__
from gpuscope.history.model import Context

_GIT_TIMEOUT_S = 5.0
# CI systems check out a commit, not a branch: their variables name the branch
_BRANCH_VARIABLES = (
    "GITHUB_HEAD_REF",
    "GITHUB_REF_NAME",
    "CI_COMMIT_REF_NAME",
    "BRANCH_NAME",
    "GIT_BRANCH",
    "BUILDKITE_BRANCH",
)


class _Gpu(Protocol):
    name: str


class HostLike(Protocol):
    """What `tools.host.detect_host()` returns (the caller probes; this layer does not)."""

    @property
    def driver(self) -> str | None: ...

    @property
    def runtime(self) -> str | None: ...

    @property
    def gpus(self) -> Sequence[Any]: ...


def now_iso(moment: datetime | None = None) -> str:
    """UTC, ISO 8601 with milliseconds and `Z` (sorts as text)."""
    moment = moment or datetime.now(timezone.utc)
    return moment.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def collect(
    host: HostLike | None = None,
    commit: str | None = None,
    tags: Sequence[str] = (),
    artefacts: str | None = None,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    recorded_at: str | None = None,
    extra: Mapping[str, Any] | None = None,
) -> Context:
    """The context of a result recorded now. `commit`: as given (--commit), else the HEAD of the
    git repository of `cwd` with its dirty flag (uncommitted changes to tracked files)."""
    env = os.environ if env is None else env
    git = git_state(cwd or Path.cwd(), env)
    head = git.get("commit")
    given = commit.strip() if commit else None
    runtime = host.runtime if host is not None else None
    return Context(
        recorded_at=recorded_at or now_iso(),
        commit=given or head,
        dirty=git.get("dirty") if not given or (head or "").startswith(given) else None,
        branch=git.get("branch"),
        host=socket.gethostname(),
        gpu_model=_gpu_model(host),
        gpu_count=len(host.gpus) if host is not None and host.gpus else None,
        driver=host.driver if host is not None else None,
        rocm=_version_of(runtime, "ROCm") or _rocm_env(env) or torch_build("hip"),
        cuda=torch_build("cuda") or _version_of(runtime, "CUDA"),
        torch=package_version("torch"),
        gpuscope_version=__version__,
        tags=tuple(dict.fromkeys(t.strip() for t in tags if t.strip())),
        artefacts=artefacts,
        extra=dict(extra or {}),
    )


def git_state(cwd: Path, env: Mapping[str, str]) -> dict[str, Any]:
    """{commit, dirty, branch} of the repository holding `cwd`; {} outside one (or no git)."""
    commit = _git(cwd, "rev-parse", "HEAD")
    if commit is None:
        return {}
    status = _git(cwd, "status", "--porcelain", "--untracked-files=no")
    branch = _git(cwd, "rev-parse", "--abbrev-ref", "HEAD")
    if branch in (None, "HEAD"):  # detached (CI): the CI's variable, if any
        branch = next((env[v] for v in _BRANCH_VARIABLES if env.get(v)), None)
    return {"commit": commit, "dirty": None if status is None else bool(status), "branch": branch}


def _git(cwd: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=_GIT_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def _gpu_model(host: HostLike | None) -> str | None:
    if host is None or not host.gpus:
        return None
    names = list(dict.fromkeys(str(getattr(g, "name", g)) for g in host.gpus))
    return " + ".join(names)


def _version_of(runtime: str | None, prefix: str) -> str | None:
    if runtime and runtime.startswith(prefix + " "):
        return runtime[len(prefix) + 1 :]
    return None


def _rocm_env(env: Mapping[str, str]) -> str | None:
    info = Path(env.get("ROCM_PATH", "/opt/rocm")) / ".info" / "version"
    try:
        return info.read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def torch_build(runtime: str) -> str | None:
    """The CUDA (`cuda`) or HIP (`hip`) version PyTorch was built with — the libraries a PyTorch
    workload runs on — read from torch/version.py without importing torch (seconds); None
    without torch or for the other vendor's build."""
    from importlib.util import find_spec

    try:
        spec = find_spec("torch")
    except (ImportError, ValueError):
        return None
    for folder in (spec.submodule_search_locations or []) if spec else []:
        try:
            text = (Path(folder) / "version.py").read_text(encoding="utf-8")
        except OSError:
            continue
        found = re.search(rf"^{runtime}\s*(?::[^=]*)?=\s*['\"]([^'\"]+)['\"]", text, re.M)
        return found.group(1) if found else None
    return None


def package_version(name: str) -> str | None:
    """An installed package's version from its metadata (the package is not imported)."""
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None
