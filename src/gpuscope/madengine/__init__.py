"""Compatibility with madengine (AMD's model runner): its `--additional-context` JSON
(`context`), the `performance: <value> <metric>` lines and multiple-results CSVs a workload
prints (`performance`), and its `perf.csv` (`perfcsv`: the header, a run's rows, a locked
append). Used by `gpuscope run`, `history` and the commands; it imports none of them.
"""
