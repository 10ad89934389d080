"""Fuzzing every trace reader through the `gpuscope analyze` command line.

`seeds` finds the real inputs (read in place), `mutate` damages a copy of one, `oracle` runs the
CLI on it and judges the outcome, `runner` spreads cases over worker processes with a timeout per
input. The quick subset runs in `make test` (test_fuzz_quick.py); the long mode is
`benchmarks/fuzz_readers.py` (`make fuzz`). docs/reliability.md has the counts.
"""
