"""The trace formats gpuscope reads, one line per reader of the registry (by its name), as the
help and the messages name them: `gpuscope analyze --help`, "expected …" when a file is none of
them. Kept out of `trace/`, whose import pulls numpy, so that `--help` stays light;
tests/unit/trace/test_registry.py checks it names every built-in reader, and no other.

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


def formats_help() -> str:
    """Every format on one line, comma-separated."""
    return ", ".join(FORMATS.values())
