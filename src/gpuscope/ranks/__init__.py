"""Several ranks of one distributed job: per-rank summaries, clock alignment, collectives matched
across ranks, stragglers, per-step time per rank, load imbalance, bus bandwidth (docs/ranks.md).

    >>> from gpuscope.ranks import analyze_job
    >>> report = analyze_job(["rank0.json.gz", "rank1.json.gz"]).to_dict()   # doctest: +SKIP
"""
