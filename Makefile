# The README's quick start is these two targets; both build the virtual environment first.
#   make run    start the MCP server (HTTP) on the embedded PostgreSQL, migrating it to head
#   make test   lint, type-check and run the whole test suite (what CI runs)

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed

.PHONY: run demo bench test test-latest lock lint claude-code browser uvx-cache help
.DEFAULT_GOAL := help

help:
	@echo "make run    start the MCP server on the embedded PostgreSQL (migrates it);"
	@echo "            make run HOST=0.0.0.0 PORT=9000 listens elsewhere"
	@echo "make demo   a short scripted session: save, dedup, recall, update, restore, forget"
	@echo "make bench  latency, retrieval quality, dedup, secret, injection, capture, hook and round-trip benchmarks (benchmarks/README.md)"
	@echo "make test   lint, type-check and run the tests"
	@echo "make test-latest  the same against the newest versions pyproject.toml allows (.venv-latest)"
	@echo "make lock   pin what pyproject.toml requires into requirements/ (with hashes; UPGRADE=1: the newest versions it allows)"

# What make installs comes from the lock files in requirements/ (exact versions, with hashes;
# written by `make lock`, README "Reproducible installs"): torch's CPU build on Linux from
# PyTorch's index (TORCH_INDEX; a local copy of its wheels that pip finds serves too), then
# everything else, then this package itself, without resolving anything.
# DEPENDENCIES=latest (make test-latest) installs the newest versions pyproject.toml's ranges
# allow instead, torch's CPU build staying at the locked release, and the newest hatchling and
# uv (the one-line install's test builds the wheel and runs it with uvx).
# The stamp $(VENV)/.installed says which of the two (tests/test_lock.py reads it).
LOCK := requirements/lock.txt
TORCH_LOCK := requirements/torch-cpu.txt
TORCH_INDEX ?= https://download.pytorch.org/whl/cpu
DEPENDENCIES ?= locked
PIP := $(BIN)/python -m pip

$(INSTALLED): pyproject.toml $(LOCK) $(TORCH_LOCK)
	@$(PYTHON) requirements/lock.py --check
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --require-hashes --no-deps --extra-index-url $(TORCH_INDEX) -r $(TORCH_LOCK)
ifeq ($(DEPENDENCIES),latest)
	$(PIP) install --quiet --upgrade pip
	$(BIN)/python requirements/lock.py --torch-pin > $(VENV)/torch-pin.txt
	$(PIP) install --quiet --upgrade --upgrade-strategy eager --constraint $(VENV)/torch-pin.txt -e '.[offline,dev]' hatchling uv
else
	$(PIP) install --quiet --require-hashes --no-deps -r $(LOCK)
	$(PIP) install --quiet --no-deps --no-build-isolation -e .
endif
	$(PIP) check
	@echo $(DEPENDENCIES) > $@

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

# The one-line install's test (tests/test_one_line_install.py) runs the wheel with
# `uvx --offline`: this fills uv's cache under .cache/uv/ with the wheel's dependencies, at the
# versions the lock pins, the first time (then it is one offline run of about a second).
uvx-cache: $(INSTALLED)
	$(BIN)/python -m tests.uvx_install

# Lint and the three preparations run at the same time (a second make, four jobs, each one's
# output printed whole when it ends): on a fresh clone the installs wait on the network while
# mypy, cold, takes about 30 s of CPU. Any of them failing stops make before pytest.
# pytest-xdist: one worker per core and one more, at most four, each given whole files (a
# file's module-scoped servers start once); many tests wait on a server, a subprocess or a
# timeout, and the extra worker fills that time (on two cores, one commit, one run after the
# other: 451 s with two workers, 409 s with three). PYTEST_WORKERS=0 runs the suite in this
# one process.
PYTEST_WORKERS ?= $(shell $(PYTHON) -c 'import os; print((os.cpu_count() or 1) + 1)')
# (GNU make 4.0 and later print each job's output whole; an older make, as macOS ships,
# interleaves it)
OUTPUT_SYNC := $(if $(filter output-sync,$(.FEATURES)),--output-sync=target)
test: $(INSTALLED)
	$(MAKE) --no-print-directory --jobs=4 $(OUTPUT_SYNC) lint claude-code browser uvx-cache
	$(BIN)/pytest --numprocesses $(PYTEST_WORKERS) --maxprocesses 4 --dist loadfile

# The whole suite against the newest versions pyproject.toml's ranges allow, in a virtual
# environment of its own that is brought up to date on every run: an upstream release that
# breaks us is found here, on purpose, before `make lock` takes it.
test-latest:
	rm -f .venv-latest/.installed
	$(MAKE) test VENV=.venv-latest DEPENDENCIES=latest

# Refresh the lock files, resolved by uv (which the lock pins) for every platform the README
# lists: the locked versions that still satisfy pyproject.toml stay, what changed is resolved;
# UPGRADE=1 moves every package to the newest version the ranges allow. Run make test
# afterwards, then commit them.
lock: $(INSTALLED)
	$(BIN)/python requirements/lock.py $(if $(UPGRADE),--upgrade)
