# Quick start: `make demo` and `make test` on a fresh machine.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# pytest-xdist workers: most of the suite waits on moto, terraform and subprocesses, so more
# workers than the 2 cores pay (measured in docs/test-suite.md)
TEST_WORKERS ?= 4

.PHONY: demo test lint bench bench-live fixtures clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test,demo]'
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/gpuaudit demo --output-dir gpuaudit-report

test: $(STAMP)
	$(PY) -m ruff check scanner policies reports tests tools bench
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadgroup

lint: $(STAMP)
	$(PY) -m ruff check scanner policies reports tests tools bench

bench: $(STAMP)
	$(PY) bench/run.py

# live audit vs Prowler on a seeded moto server (~3 min; installs Prowler in bench/out/prowler-venv)
bench-live: $(STAMP)
	$(PY) bench/bench_live.py

fixtures: $(STAMP)
	bash tools/make_plan_fixtures.sh

clean:
	rm -rf gpuaudit-report bench/out .pytest_cache .cache/hook-repo-* .cache/.hook-repo-*
