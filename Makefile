# The README's quick start is these two targets; both build the virtual environment first.
#   make run    start the MCP server (HTTP) on the embedded PostgreSQL, migrating it to head
#   make test   lint, type-check and run the whole test suite (what CI runs)

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed

.PHONY: run demo bench test lint help
.DEFAULT_GOAL := help

help:
	@echo "make run    start the MCP server on the embedded PostgreSQL (migrates it)"
	@echo "make demo   a short scripted session: save, dedup, recall, update, forget"
	@echo "make bench  latency, retrieval quality and dedup benchmarks (benchmarks/README.md)"
	@echo "make test   lint, type-check and run the tests"

$(INSTALLED): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "emergent-memory needs Python 3.11 or newer: run make with PYTHON=python3.11 (or newer)")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	# the CPU build of torch first: left to itself, pip would pick a multi-GB CUDA build
	$(BIN)/python -m pip install --quiet torch==2.13.0
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $@

run: $(INSTALLED)
	$(BIN)/emergent-memory serve --transport http --migrate

demo: $(INSTALLED)
	$(BIN)/emergent-memory demo --migrate

bench: $(INSTALLED)
	$(BIN)/python -m benchmarks.run

lint: $(INSTALLED)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

test: lint
	$(BIN)/pytest
