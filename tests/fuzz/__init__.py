"""Fuzzing gpuscope through its command line, in two modes (docs/reliability.md).

Reader mode: `seeds` finds the real inputs (read in place), `mutate` damages a copy of one,
`oracle` runs `gpuscope analyze` on it and judges the outcome (test_fuzz_quick.py, the long mode
benchmarks/fuzz_readers.py). CLI mode: `cli_commands` draws a command line — a subcommand, its
flags, good or damaged inputs (`cli_seeds`), output targets of every kind (`cli_targets`) —,
`cli_exec` runs it in its own session and `cli_oracle` judges everything it touched
(test_fuzz_cli_quick.py, benchmarks/fuzz_cli.py). `runner` spreads the cases of either mode over
worker processes with a timeout per case; `long_run` counts and keeps the failures.
"""
