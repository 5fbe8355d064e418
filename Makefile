# Battlement: `make run` and `make test` set everything up on a fresh machine.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
BIN := $(VENV)/bin
STAMP := $(VENV)/.battlement-setup
RUN_STAMP := $(VENV)/.battlement-run
# Debian packages: binary -> package. Running needs speech only; the tests need the rest too.
DEB_RUN := espeak-ng:espeak-ng sox:sox
DEB_NEEDS := $(DEB_RUN) mosquitto:mosquitto socat:socat openssl:openssl chromium:chromium

# Flash parameters (see docs/flashing.md).
BOARD ?=
PORT ?=
ID ?=
DRYRUN ?=

.PHONY: setup setup-run debs debs-run run test soak bench lint docs flash clean help

help:
	@echo "make run    - set up if needed, run the bridge with a simulated table, serve the page"
	@echo "make test   - set up if needed, run every test"
	@echo "make soak   - the long fault runs (1M fuzzed frames, 10 min of overload, kill cycles); a table at the end"
	@echo "make bench  - benchmarks, each figure beside a baseline measured in the same run"
	@echo "make lint   - ruff + mypy (host, and firmware against board stubs)"
	@echo "make docs   - redraw the layers picture in docs/bridge.md from the host's imports"
	@echo "make flash BOARD=<profile> PORT=<serial port> ID=<board id> [DRYRUN=1]"

# MicroPython board stubs for type-checking firmware/ (one folder per board, not committed).
FW_STUBS := firmware/typings_esp32/.installed firmware/typings_rp2/.installed

# `make run` sets up what running needs (the package and speech); `make test` everything.
setup: $(STAMP) debs $(FW_STUBS)
setup-run: $(RUN_STAMP) debs-run

firmware/typings_%/.installed: $(STAMP)
	@$(PY) -m pip install -q --no-deps --upgrade --target firmware/typings_$* micropython-$*-stubs micropython-stdlib-stubs \
	  >$(VENV)/typings_$*.log 2>&1 || { cat $(VENV)/typings_$*.log; echo "setup: installing $* stubs failed"; exit 1; }
	@touch $@

$(RUN_STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@echo "setup: installing the bridge into $(VENV) (first time takes a minute)"
	@( $(PY) -m pip install -q --upgrade pip && $(PY) -m pip install -q -e . ) >$(VENV)/setup.log 2>&1 \
	  || { cat $(VENV)/setup.log; echo "setup: pip install failed (log above, also in $(VENV)/setup.log)"; exit 1; }
	@touch $(RUN_STAMP)

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@echo "setup: installing Python packages into $(VENV) (first time takes a minute)"
	@( $(PY) -m pip install -q --upgrade pip && $(PY) -m pip install -q -e '.[dev]' ) >$(VENV)/setup.log 2>&1 \
	  || { cat $(VENV)/setup.log; echo "setup: pip install failed (log above, also in $(VENV)/setup.log)"; exit 1; }
	@touch $(STAMP) $(RUN_STAMP)

# Install missing Debian packages when we can (root or passwordless sudo); otherwise say what to do.
debs: NEEDS = $(DEB_NEEDS)
debs-run: NEEDS = $(DEB_RUN)
debs debs-run:
	@missing=""; for pair in $(NEEDS); do bin=$${pair%%:*}; pkg=$${pair##*:}; \
	  command -v $$bin >/dev/null 2>&1 || missing="$$missing $$pkg"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then SUDO=""; elif sudo -n true 2>/dev/null; then SUDO="sudo -n"; else SUDO=none; fi; \
	  if [ "$$SUDO" = none ]; then \
	    echo "setup: missing Debian packages:$$missing"; \
	    echo "setup: install them with: sudo apt-get install -y$$missing"; exit 1; \
	  fi; \
	  echo "setup: installing Debian packages:$$missing"; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	fi

run: setup-run
	$(BIN)/battlement run --simulate

test: setup
	$(BIN)/pytest -n 2 -q

# The soak variants: long, so never in CI; pytest prints tried / survived / lost / leaked per run at the end.
# Then the rules' mutation score (a seeded sample of mutants, about an hour): fails under 95% killed.
soak: setup
	$(BIN)/pytest -m soak -q --timeout=3600
	$(PY) tests/rules/mutation.py

bench: setup
	$(PY) tests/bench/run.py

lint: setup
	$(BIN)/ruff check host shared_rules tests firmware
	$(BIN)/mypy host/battlement
	$(BIN)/mypy --config-file firmware/mypy-esp32.ini firmware/*.py
	$(BIN)/mypy --config-file firmware/mypy-rp2.ini firmware/*.py

# The picture of the host's layers in docs/bridge.md, drawn from its imports (tests/test_layers.py checks it).
docs: setup-run
	$(PY) tests/support/layers.py --write

flash: setup
	$(BIN)/battlement flash --board "$(BOARD)" --port "$(PORT)" --id "$(ID)" $(if $(DRYRUN),--dry-run,)

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache
