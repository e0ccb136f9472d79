# The two commands of the README, plus the developer's checks. Everything runs in .venv.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# .venv/.base: litdata and what the demo needs (torch, pillow); .venv/.installed adds the test and
# every optional extra, for `make test`.
BASE := $(VENV)/.base
STAMP := $(VENV)/.installed
# azurite (the Azure Blob emulator) for the Azure tests, from npm into .ci/ (they skip without it)
AZURITE_VERSION ?= 3.37.0
AZURITE := .ci/node_modules/.bin/azurite-blob

.PHONY: demo test faults lint bench clean azurite chromium jpeg view-test

# (Re)create the virtualenv when pyproject.toml changes. torch is pinned to the local CPU wheel.
# Installing litdata compiles its JPEG region decoder (hatch_build.py; see `jpeg` below).
$(BASE): pyproject.toml hatch_build.py litdata/vision/region.c
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet "torch==2.13.0"
	$(BIN)/python -m pip install --quiet hatchling
	$(BIN)/python -m pip install --quiet -e ".[images]"
	touch $(BASE)

$(STAMP): $(BASE) pyproject.toml tests/plugin_example/pyproject.toml
	$(BIN)/python -m pip install --quiet -e ".[test,all]"
	touch $(STAMP)

# The demo writes, inspects, streams, stops and resumes a dataset it leaves in demo-dataset/.
demo: $(BASE)
	$(BIN)/python examples/demo.py

test: $(STAMP) lint
	$(BIN)/python -m pytest -n 2

faults: $(STAMP)
	$(BIN)/python -m pytest -n 2 -q tests/faults tests/hostile

lint: $(STAMP)
	$(BIN)/ruff check --output-format=concise .
	$(BIN)/mypy

azurite: $(AZURITE)

$(AZURITE):
	npm install --prefix .ci --no-save --no-package-lock --no-audit --no-fund --loglevel=error \
		"azurite@$(AZURITE_VERSION)"

# Debian's headless Chromium and its driver, for the viewer's browser tests (they skip without).
chromium:
	@command -v chromium >/dev/null && command -v chromedriver >/dev/null || { \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			--no-install-recommends chromium chromium-driver >/dev/null; }

# libjpeg-turbo's headers, for the JPEG region decoder that installing litdata compiles
# (without them it is skipped and ld.vision crops decode whole images).
jpeg:
	@test -f /usr/include/jpeglib.h || { \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			--no-install-recommends libjpeg62-turbo-dev >/dev/null; }

# The viewer's API and browser tests (screenshots in $(LITDATA_VIEW_SCREENSHOTS) when set).
view-test: $(STAMP) chromium
	$(BIN)/python -m pytest -q tests/view

bench: $(STAMP)
	$(BIN)/python bench/run.py

clean:
	rm -rf $(VENV)
