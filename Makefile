# Two commands for a newcomer:  `make run` (the server, offline demo model) and `make test`.
PYTHON ?= python3
MAKEFLAGS += --no-print-directory  # `make -C dir run` too: stdout is the protocol's
VENV := .venv
BIN := $(VENV)/bin
# pytest-xdist workers, two per core by default: a test mostly starts real processes and
# waits on them, so one worker a core leaves the cores idle for much of the run.
TEST_WORKERS ?= $(shell echo $$(( $$(nproc) * 2 )))

.PHONY: run run-http test lint bench bench-peers bench-detail web clean

# Installation talks on stderr only: `make run`'s stdout is the protocol's.
$(BIN)/python:
	@echo "creating $(VENV)" >&2
	@$(PYTHON) -m venv $(VENV) >&2
	@$(BIN)/pip install --quiet --upgrade pip >&2

# Two stamps: `make test` (and .ci/run) install the server with its test tools
# (.installed); `make run` needs only the server (.installed-run), which a test install
# already holds.
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	@echo "installing iac-code and its test tools into $(VENV)" >&2
	@$(BIN)/pip install --quiet -e ".[test]" >&2
	@touch $@

$(VENV)/.installed-run: pyproject.toml | $(BIN)/python
	@if [ $(VENV)/.installed -nt pyproject.toml ]; then :; else \
	  echo "installing iac-code into $(VENV)" >&2; \
	  $(BIN)/pip install --quiet -e . >&2; fi
	@touch $@

## Install, then serve ACP on stdio. Offline by default; IAC_CODE_PROVIDER=anthropic for Claude.
# `make -C DIR run` makes GNU make print "Entering directory" on stdout before it reads any
# Makefile, so nothing here can stop it: `make -s -C DIR run` (or the .venv/bin/iac-code
# command) keeps stdout for the protocol. Said on stderr, where an editor shows it.
run: $(VENV)/.installed-run
	@case "$(firstword -$(MAKEFLAGS))" in *w*) echo "iac-code: make printed its directory on \
stdout, which breaks the protocol: use 'make -s -C DIR run' or $(CURDIR)/$(BIN)/iac-code acp" >&2;; \
	esac
	@IAC_CODE_PROVIDER=$${IAC_CODE_PROVIDER:-demo} $(BIN)/iac-code acp

## The same over HTTP + SSE and WebSocket on 127.0.0.1:8765, with the web client at /.
run-http: $(VENV)/.installed-run
	@IAC_CODE_PROVIDER=$${IAC_CODE_PROVIDER:-demo} $(BIN)/iac-code acp --transport http

# The web client's tools (TypeScript, esbuild, Biome, its unit tests' types), from its lock
# file: `make lint`, `make test` and `make web` need Node.js and npm; `make run` does not
# (an installed server serves the committed dist/).
WEB_CLIENT := adapters/http/web_client
WEB_TOOLS := $(WEB_CLIENT)/node_modules/.installed

$(WEB_TOOLS): $(WEB_CLIENT)/package-lock.json
	@echo "installing the web client's tools into $(WEB_CLIENT)/node_modules" >&2
	@cd $(WEB_CLIENT) && npm ci --no-audit --no-fund >&2
	@touch $@

## Install, then run every check CI runs: lint, format, import boundaries, all tests.
# worksteal: a worker that runs out takes tests from another's queue (with plain `load` the
# slowest end-to-end files were left to one worker while the others stood idle). Bytecode is
# written even where PYTHONDONTWRITEBYTECODE is set: otherwise every worker rewrites every
# test module's asserts again, and every server a test starts compiles the project again.
test: $(VENV)/.installed lint $(WEB_TOOLS)
	cd $(WEB_CLIENT) && npm test
	PYTHONDONTWRITEBYTECODE= $(BIN)/pytest -q -n $(TEST_WORKERS) --dist worksteal

lint: $(VENV)/.installed $(WEB_TOOLS)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(BIN)/mypy
	cd $(WEB_CLIENT) && npm run --silent lint

## The speed targets, measured from outside on the real process, as one table.
bench: $(VENV)/.installed
	$(BIN)/python bench/targets.py

## One streaming turn through iac-code and through claude-code-acp (if installed), side by side.
bench-peers: $(VENV)/.installed
	$(BIN)/python bench/peers.py

## The older, more detailed benchmarks (start-up, store at scale, HTTP load, long sessions).
bench-detail: $(VENV)/.installed
	$(BIN)/python bench/startup.py
	$(BIN)/python bench/sessions.py
	$(BIN)/python bench/http_load.py
	$(BIN)/python bench/long_session.py

## Rebuild the web client's committed output (adapters/http/web_client/dist/) from its
## source with the machine's Node.js; commit dist/ after (a test checks they agree).
web: $(WEB_TOOLS)
	cd $(WEB_CLIENT) && npm run build

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .import_linter_cache
