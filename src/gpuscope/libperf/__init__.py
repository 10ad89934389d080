"""Library config replay (`gpuscope libperf`): the GEMM, convolution and collective configs a
model's libraries logged (library_trace.csv), each replayed on this GPU and ranked.

Pipeline: `configs` (read the CSV, one `Config` per unique problem, calls kept) → `replay`
(each config through `torch_replay` — PyTorch timed with gpuscope.bench — and `vendor_bench` —
rocblas-bench, hipblaslt-bench, MIOpenDriver, nccl-tests — within --limit / --budget-s) →
`output` (rates against the ceilings, library_perf.csv ranked by total time) → `report` (top
configs, configs far under their roofline, backends compared; terminal, Markdown, JSON).

    >>> from gpuscope.libperf import configs, replay                      # doctest: +SKIP
    >>> found = configs.dedupe(configs.load(Path("library_trace.csv")).calls)
    >>> pairs = replay.replay(found, replay.Options(backends=("vendor",)))
"""

from __future__ import annotations
