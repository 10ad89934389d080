# Quick start: `make demo` and `make test` work on a fresh Linux machine with Python 3.10+.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
DEMO_TRACE := src/gpuscope/data/examples/llama_decode_h200.json.gz
# extras the test targets add: Ray and Dask, whose engines tests/integration/test_cluster_engines.py
# runs (~25 s and ~250 MB more in the venv); `make test ENGINES=` where ray has no wheel (those
# tests then skip)
ENGINES ?= ray,dask
comma := ,
EXTRAS := test$(if $(ENGINES),$(comma)$(ENGINES))

# Three sets of dependencies (docs/development.md):
# - the lock: exact versions of everything the test, engine and docs extras pull in, for Python
#   3.10-3.13 (uv's universal resolution), committed; `make test` and `make docs` install from
#   it, `make lock` refreshes it to today's releases;
# - newest: a fresh venv resolving the newest release of every dependency (`make test-newest`);
# - oldest: a fresh venv resolving the lower bounds in pyproject.toml (`make test-oldest`): every
#   direct dependency at its bound, or at its first release with a wheel for this Python.
# uv (pinned here, installed into $(VENV) by pip) resolves and installs all three.
UV_VERSION ?= 0.13.9
UV := $(VENV)/bin/uv
LOCK := requirements-lock.txt
LOCK_EXTRAS := --extra test --extra ray --extra dask --extra docs
LOCK_OPTIONS := --universal --python-version 3.10 --custom-compile-command 'make lock' --quiet
NEWEST_VENV ?= .venv-newest
OLDEST_VENV ?= .venv-oldest

.PHONY: demo test test-alone test-newest test-oldest lock lock-check lint typecheck unit fuzz \
	fuzz-readers fuzz-cli docs clean

$(UV):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q 'uv==$(UV_VERSION)'

$(VENV)/.installed: pyproject.toml $(LOCK) | $(UV)
	$(UV) pip install -q --python $(PY) -c $(LOCK) -e '.[test]'
	touch $@

$(VENV)/.engines: $(VENV)/.installed
	$(if $(ENGINES),$(UV) pip install -q --python $(PY) -c $(LOCK) -e '.[$(EXTRAS)]')
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
	$(PY) scripts/dependency_versions.py lock
	$(VENV)/bin/ruff check src tests benchmarks
	$(VENV)/bin/mypy
	$(PY) -m pytest -q

# the lock again from pyproject.toml, every package at its newest release (commit the result);
# `make lock UPGRADE=` keeps every version the lock pins that still fits (after adding a
# dependency or changing a bound, only what that needs moves)
UPGRADE ?= --upgrade
lock: | $(UV)
	$(UV) pip compile pyproject.toml $(LOCK_EXTRAS) $(LOCK_OPTIONS) $(UPGRADE) -o $(LOCK)

# fails when the lock no longer covers pyproject.toml (a dependency or a bound changed without
# `make lock`): the lock resolved again, keeping every version it pins that still fits
lock-check: | $(UV)
	@fresh=$$(mktemp) && cp $(LOCK) $$fresh && \
	$(UV) pip compile pyproject.toml $(LOCK_EXTRAS) $(LOCK_OPTIONS) -o $$fresh && \
	if diff -u $(LOCK) $$fresh; then rm -f $$fresh; \
	else rm -f $$fresh; echo "$(LOCK) is stale: make lock"; exit 1; fi

# the checks of `make test` in a fresh venv with the newest release of every dependency: a
# release that breaks gpuscope fails here the day it is out
test-newest: | $(UV)
	rm -rf $(NEWEST_VENV)
	$(PYTHON) -m venv --without-pip $(NEWEST_VENV)
	$(UV) pip install -q --python $(NEWEST_VENV)/bin/python -e '.[$(EXTRAS)]'
	$(NEWEST_VENV)/bin/python scripts/dependency_versions.py newest
	$(NEWEST_VENV)/bin/ruff check src tests benchmarks
	$(NEWEST_VENV)/bin/mypy
	$(NEWEST_VENV)/bin/python -m pytest -q -p no:cacheprovider

# the suite in a fresh venv with every direct dependency at the lower bound in pyproject.toml
# (transitive ones at their newest that fits); a release without a wheel for this Python is
# skipped, so on a newer Python a bound is met by the first release built for it
test-oldest: | $(UV)
	rm -rf $(OLDEST_VENV)
	$(PYTHON) -m venv --without-pip $(OLDEST_VENV)
	$(UV) pip compile -q pyproject.toml $(foreach e,$(subst $(comma), ,$(EXTRAS)),--extra $(e)) \
	  --resolution lowest-direct --only-binary :all: --no-header \
	  --python $(OLDEST_VENV)/bin/python -o $(OLDEST_VENV)/requirements.txt
	$(UV) pip install -q --python $(OLDEST_VENV)/bin/python -r $(OLDEST_VENV)/requirements.txt
	$(UV) pip install -q --python $(OLDEST_VENV)/bin/python --no-deps -e .
	$(OLDEST_VENV)/bin/python scripts/dependency_versions.py oldest
	$(OLDEST_VENV)/bin/python -m pytest -q -p no:cacheprovider

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
	$(UV) pip install -q --python $(PY) -c $(LOCK) -e '.[docs]'
	touch $@

docs: $(VENV)/.docs
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet

clean:
	rm -rf $(VENV) $(NEWEST_VENV) $(OLDEST_VENV) demo-report site .pytest_cache .mypy_cache .ruff_cache
