# Quick start: `make demo` and `make test` work on a fresh Linux machine with Python 3.10+.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
DEMO_TRACE := src/gpuscope/data/examples/llama_decode_h200.json.gz

.PHONY: demo test lint typecheck unit fuzz clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	touch $@

demo: $(VENV)/.installed
	$(VENV)/bin/gpuscope analyze $(DEMO_TRACE) --json demo-report/summary.json --md demo-report/report.md --html demo-report/report.html
	@echo "wrote demo-report/summary.json, demo-report/report.md, demo-report/report.html"

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check src tests benchmarks
	$(VENV)/bin/ruff format --check src tests benchmarks

typecheck: $(VENV)/.installed
	$(VENV)/bin/mypy

unit: $(VENV)/.installed
	$(PY) -m pytest -q

test: $(VENV)/.installed
	$(VENV)/bin/ruff check src tests benchmarks
	$(VENV)/bin/mypy
	$(PY) -m pytest -q

# every reader fed damaged copies of the real inputs (docs/reliability.md); the quick subset of it
# runs in `make test`
FUZZ_N ?= 10000
FUZZ_SEED ?= 1
FUZZ_JOBS ?= 2
fuzz: $(VENV)/.installed
	$(PY) benchmarks/fuzz_readers.py --per-format $(FUZZ_N) --seed $(FUZZ_SEED) --jobs $(FUZZ_JOBS) --json fuzz-summary.json

clean:
	rm -rf $(VENV) demo-report .pytest_cache .mypy_cache .ruff_cache
