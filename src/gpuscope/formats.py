"""The trace formats gpuscope reads, one entry per reader of the registry (by its name): what
it reads, as `gpuscope analyze --help`, the messages ("expected …"), the shell completion's help
and the first column of docs/analyze.md's format table name it (`FORMATS`), and the file name
endings its outputs carry, which a workload's name drops (`ENDINGS`, read by `history.metrics`).
Never used to choose a reader: the registry sniffs content. Kept out of `trace/`, whose import
pulls numpy, so that `--help` stays light; tests/unit/trace/test_registry.py checks it names
every built-in reader, and no other.

    >>> "Perfetto" in formats_help()
    True
"""

from __future__ import annotations

FORMATS = {  # reader name -> what it reads
    "kineto": "Kineto/Chrome trace JSON (torch.profiler)",
    "rocprof": "rocprof v1 (results.csv, *.stats.csv, results.json, results.db)",
    "rocprofv3": "rocprofv3 (CSV, JSON)",
    "rocpd": "rocpd (rocprofv3's .db)",
    "rpd": "rpd (.rpd)",
    "nsys": "Nsight Systems (.sqlite export, .nsys-rep)",
    "ncu": "Nsight Compute (ncu --csv)",
    "jax": "JAX / XLA (jax.profiler's trace JSON, .xplane.pb)",
    "pftrace": "Perfetto protobuf (.pftrace)",
}
ENDINGS = {  # reader name -> the file name endings of its outputs
    "kineto": (".json.gz", ".json", ".gz"),
    "rocprof": (".csv", ".json", ".db"),
    "rocprofv3": (".csv", ".json"),
    "rocpd": (".db",),
    "rpd": (".rpd",),
    "nsys": (".sqlite", ".nsys-rep"),
    "ncu": (".csv", ".ncu-rep"),
    "jax": (".json.gz", ".pb"),
    "pftrace": (".pftrace",),
}


def formats_help() -> str:
    """Every format on one line, comma-separated."""
    return ", ".join(FORMATS.values())


def endings() -> tuple[str, ...]:
    """Every format's file name endings, each once, longest first (so that `.json.gz` is
    dropped whole, not as `.gz`)."""
    found = dict.fromkeys(e for names in ENDINGS.values() for e in names)
    return tuple(sorted(found, key=lambda e: (-len(e), e)))
