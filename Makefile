# Quick start: `make demo` and `make test` work on a fresh Linux machine with Python 3.10+.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
DEMO_TRACE := src/gpuscope/data/examples/llama_decode_h200.json.gz
# extras the test targets add: Ray and Dask, whose engines tests/integration/test_cluster_engines.py
# runs (~25 s and ~250 MB more in the venv); `make test ENGINES=` where ray has no wheel (those
# tests then skip)
ENGINES ?= ray,dask

.PHONY: demo test test-alone lint typecheck unit fuzz fuzz-readers fuzz-cli docs clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	touch $@

$(VENV)/.engines: $(VENV)/.installed
	$(if $(ENGINES),$(PY) -m pip install -q -e '.[$(ENGINES)]')
	touch $@

demo: $(VENV)/.installed
	$(VENV)/bin/gpuscope analyze $(DEMO_TRACE) --json demo-report/summary.json --md demo-report/report.md --html demo-report/report.html
	@echo "wrote demo-report/summary.json, demo-report/report.md, demo-report/report.html"

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check src tests benchmarks
	$(VENV)/bin/ruff format --check src tests benchmarks

typecheck: $(VENV)/.installed
	$(VENV)/bin/mypy

unit: $(VENV)/.engines
	$(PY) -m pytest -q

test: $(VENV)/.engines
	$(VENV)/bin/ruff check src tests benchmarks
	$(VENV)/bin/mypy
	$(PY) -m pytest -q

# the suite on a copy of this tree (tracked and untracked-not-ignored files) in a fresh temporary
# folder, so with no ../shared beside it: what a user who clones the project alone runs. Tests that
# need the reference files must skip, not fail. The copy runs on this venv, its own src/ first on
# the path. CI runs it after `make test` (.ci/run).
test-alone: $(VENV)/.engines
	@alone=$$(mktemp -d) && mkdir $$alone/main && \
	git ls-files -z --cached --others --exclude-standard | \
	  tar --null --ignore-failed-read -T - -cf - 2>/dev/null | tar -xf - -C $$alone/main && \
	echo "make test-alone: the suite in $$alone/main (no ../shared)" && \
	(cd $$alone/main && PYTHONPATH=$$alone/main/src $(abspath $(PY)) -m pytest -q -p no:cacheprovider); \
	status=$$?; rm -rf $$alone; exit $$status

# docs/reliability.md: every reader fed damaged copies of the real inputs (fuzz-readers), and
# random command lines over damaged inputs and every kind of output target (fuzz-cli); the quick
# subsets of both run in `make test`
FUZZ_N ?= 10000
FUZZ_CLI_N ?= 10000
FUZZ_SEED ?= 1
FUZZ_JOBS ?= 2
fuzz: fuzz-readers fuzz-cli

fuzz-readers: $(VENV)/.installed
	$(PY) benchmarks/fuzz_readers.py --per-format $(FUZZ_N) --seed $(FUZZ_SEED) --jobs $(FUZZ_JOBS) --json fuzz-summary.json

fuzz-cli: $(VENV)/.installed
	$(PY) benchmarks/fuzz_cli.py --cases $(FUZZ_CLI_N) --seed $(FUZZ_SEED) --jobs $(FUZZ_JOBS) --json fuzz-cli-summary.json

# the docs site (mkdocs.yml): guides, API reference from the docstrings, schemas; --strict, into
# site/ (nothing is published)
$(VENV)/.docs: $(VENV)/.installed
	$(PY) -m pip install -q -e '.[docs]'
	touch $@

docs: $(VENV)/.docs
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet

clean:
	rm -rf $(VENV) demo-report site .pytest_cache .mypy_cache .ruff_cache
