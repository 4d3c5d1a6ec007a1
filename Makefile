# Quick start: `make demo` and `make test` on a fresh machine.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# checkov in a virtualenv of its own: checkov 3.3 pins boto3 1.35.49, which gpuaudit's own
# environment must not be held to. gpuaudit is installed into it editable (the `checkov` extra),
# so that the external checks checkov loads run the policies of this tree as it is now.
CHECKOV_VENV ?= .venv-checkov
CHECKOV_STAMP := $(CHECKOV_VENV)/.installed
# pytest-xdist workers: most of the suite waits on moto, terraform and subprocesses, so more
# workers than the 2 cores pay (measured in docs/test-suite.md)
TEST_WORKERS ?= 4
# Byte-compiled modules kept between runs (under .cache/, not beside the sources), even where
# the environment sets PYTHONDONTWRITEBYTECODE: without them every worker and every `gpuaudit`,
# checkov and pre-commit subprocess of the suite compiles the package again (3.2 s of CPU per
# worker to collect the suite, 1 s with them).
PYCACHE := $(abspath .cache/pycache)

.PHONY: demo test test-tools dist lint bench bench-live bench-html bench-telemetry bench-regions bench-org docs fixtures clean \
	checkov-venv

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test,demo]'
	touch $(STAMP)

$(CHECKOV_STAMP): pyproject.toml
	test -x $(CHECKOV_VENV)/bin/python || $(PYTHON) -m venv $(CHECKOV_VENV)
	$(CHECKOV_VENV)/bin/python -m pip install -q --upgrade pip
	$(CHECKOV_VENV)/bin/python -m pip install -q -e '.[checkov]'
	touch $(CHECKOV_STAMP)

checkov-venv: $(CHECKOV_STAMP)

demo: $(STAMP)
	$(VENV)/bin/gpuaudit demo --output-dir gpuaudit-report

# the system tools the tests drive for real (Debian packages; as root, or with sudo)
test-tools:
	bash tools/install_chromium.sh
	bash tools/install_prometheus.sh

test: $(STAMP) $(CHECKOV_STAMP) test-tools
	$(PY) -m ruff check scanner policies reports tests tools bench
	$(PY) -m mypy
	PYTHONDONTWRITEBYTECODE= PYTHONPYCACHEPREFIX=$(PYCACHE) \
	GPUAUDIT_TEST_CHECKOV=$(abspath $(CHECKOV_VENV))/bin/checkov $(PY) -m pytest -n $(TEST_WORKERS) --dist loadgroup

# the sdist and the wheel, in dist/ (pip install dist/gpuaudit-*.whl works offline from here on)
dist: $(STAMP)
	$(PY) -m build --outdir dist .

# mypy --strict on scanner/ and policies/ ([tool.mypy] in pyproject.toml; its cache in .cache/mypy)
lint: $(STAMP)
	$(PY) -m ruff check scanner policies reports tests tools bench
	$(PY) -m mypy

bench: $(STAMP) $(CHECKOV_STAMP)
	$(PY) bench/run.py

# live audit vs Prowler on a seeded moto server (~3 min; installs Prowler in bench/out/prowler-venv)
bench-live: $(STAMP)
	$(PY) bench/bench_live.py

# the HTML report of 20,000 findings in headless Chromium (tools/install_chromium.sh)
bench-html: $(STAMP)
	$(PY) bench/bench_html.py

# docs/policies/ from the policy metadata (tests/test_report_sarif.py fails when it is stale)
docs: $(STAMP)
	$(PY) -m reports.policy_docs

# CloudWatch right-sizing telemetry at fleet size against a fake client (1,000 x 4 GPUs x 14 days)
bench-telemetry: $(STAMP)
	$(PY) bench/bench_telemetry.py

# a whole live audit of an empty account in 17 regions (moto server): clients, classes, CPU
bench-regions: $(STAMP)
	$(PY) bench/bench_regions.py

# an organisation audit at 1, 4 and 16 shards on a moto server with 100 ms a call and
# throttling; projects the wall of 1,000 accounts x 17 regions on 16 shards (~5 min)
bench-org: $(STAMP)
	$(PY) bench/bench_org.py

fixtures: $(STAMP)
	bash tools/make_plan_fixtures.sh

clean:
	rm -rf gpuaudit-report bench/out .pytest_cache .cache/hook-repo-* .cache/.hook-repo-* .cache/demo-env-* .cache/pycache .cache/mypy
