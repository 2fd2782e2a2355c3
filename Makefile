# Two commands for a newcomer:  `make run` (the server, offline demo model) and `make test`.
PYTHON ?= python3
MAKEFLAGS += --no-print-directory  # `make -C dir run` too: stdout is the protocol's
VENV := .venv
BIN := $(VENV)/bin

.PHONY: run test lint bench clean

# Installation talks on stderr only: `make run`'s stdout is the protocol's.
$(BIN)/python:
	@echo "creating $(VENV)" >&2
	@$(PYTHON) -m venv $(VENV) >&2
	@$(BIN)/pip install --quiet --upgrade pip >&2

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	@echo "installing iac-code and its test tools into $(VENV)" >&2
	@$(BIN)/pip install --quiet -e ".[test]" >&2
	@touch $@

## Install, then serve ACP on stdio. Offline by default; IAC_CODE_PROVIDER=anthropic for Claude.
run: $(VENV)/.installed
	@IAC_CODE_PROVIDER=$${IAC_CODE_PROVIDER:-demo} $(BIN)/iac-code acp

## Install, then run every check CI runs: lint, format, import boundaries, all tests.
test: $(VENV)/.installed lint
	$(BIN)/pytest -q

lint: $(VENV)/.installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(BIN)/mypy

bench: $(VENV)/.installed
	$(BIN)/python bench/startup.py
	$(BIN)/python bench/sessions.py
	$(BIN)/python bench/http_load.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .import_linter_cache
