"""Hardware counters → derived metrics → roofline → findings (`gpuscope counters`).

    >>> from gpuscope.trace.registry import read_traces
    >>> from gpuscope.counters.pipeline import analyse_counters
    >>> report = analyse_counters(read_traces("rocprof_output/"), arch="gfx942")  # doctest: +SKIP
    >>> report.to_dict()["kernels"][0]["roofline"]["bound"]                      # doctest: +SKIP
    'memory'

Modules, in pipeline order (`pipeline.analyse_counters` runs them): `collect` (counter values
per dispatch, passes merged), `metrics` (the per-family metric definitions in
data/counters/*.json) with `formula` (their safe evaluator) and `evaluate`, `ceilings` (the
roofs), `roofline`, `occupancy`, `rules` (the findings), `analysis` (the `CounterAnalysis` and
its report as plain data), `label` (gpuscope's one-word label: small grid, memory- or
compute-bound), `ncu_rules` (Nsight Compute's own rule rows beside that label), `views`
(document sections). `capability` and `presets` say which
counters a GPU can collect and in how many passes; `extra` is the section of `gpuscope analyze`.
"""
