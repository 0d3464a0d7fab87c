# The two commands of the README: `make run` and `make test`. Everything else is what they need.
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
RUNTIME := $(VENV)/.installed-runtime
export PIP_DISABLE_PIP_VERSION_CHECK := 1

.PHONY: run test install services migrate lint bench mutants clean upgrade lock

# pip as old as Python 3.11's own (23.2), checking hashes, refuses an extra's requirement (pip-audit's
# CacheControl[filecache]) as unpinned once the index holds a release newer than the lock's: a newer pip
# matches it to the pinned one.
$(BIN)/python:
	$(PYTHON) -m venv $(VENV) 2>/dev/null || python3 -m venv $(VENV)
	$(BIN)/python -m pip install -q "pip==26.3"

# Two locks, every package at its exact version and each file checked against its hash: requirements.lock
# is what a server needs (`make run`, an image), requirements-dev.lock that and the tools of the suite and
# the benchmarks; then the project itself, without dependencies (a dependency the lock lacks fails at import).
$(RUNTIME): requirements.lock pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q --require-hashes -r requirements.lock
	$(BIN)/pip install -q --no-deps -e .
	@touch $(RUNTIME)

$(STAMP): requirements-dev.lock pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q --require-hashes -r requirements-dev.lock
	$(BIN)/pip install -q --no-deps -e .
	@touch $(STAMP) $(RUNTIME)

install: $(STAMP)

COMPILE := $(BIN)/uv pip compile pyproject.toml --universal --generate-hashes --python-version 3.11 -q

## Both locks again from pyproject.toml's ranges (newest versions within them; the runtime lock takes the
## development lock's versions), installed, the suite run on them, then the known vulnerabilities of what each
## installs (pip-audit, PyPI's advisory data; --strict: a package it could not look up fails the audit).
upgrade: install
	$(COMPILE) --extra dev -o requirements-dev.lock --upgrade
	cp requirements-dev.lock requirements.lock && $(COMPILE) -o requirements.lock
	$(MAKE) install test
	$(BIN)/pip-audit --strict --disable-pip --progress-spinner off -r requirements.lock
	$(BIN)/pip-audit --strict --disable-pip --progress-spinner off -r requirements-dev.lock

## Both locks again after a change of pyproject.toml's dependencies, keeping every version they can.
lock: install
	$(COMPILE) --extra dev -o requirements-dev.lock
	cp requirements-dev.lock requirements.lock && $(COMPILE) -o requirements.lock

## Serve on 127.0.0.1:$(PORT), 8000 unless PORT says (GraphiQL at /graphql; mail links follow the port
## unless PUBLIC_URL says); SQLite + in-process Redis unless DATABASE_URL/REDIS_URL.
PORT ?= 8000
run: $(RUNTIME)
	$(BIN)/discours migrate
	$(BIN)/discours seed --if-empty
	PUBLIC_URL=$${PUBLIC_URL:-http://127.0.0.1:$(PORT)} $(BIN)/discours serve --host 127.0.0.1 --port $(PORT)

services:
	@bash scripts/ensure-services.sh

## The whole suite against real PostgreSQL and Redis on 127.0.0.1 (installed and started if missing): the drills
## and the image beside the rest, then the Redis-heavy modules again on a three-master Redis Cluster of its own;
## mypy and the import contracts beside them too (devtools/test_all.py, devtools/on_cluster.py).
test: install services
	$(BIN)/python -m devtools.test_all

lint: install
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/lint-imports --no-cache

bench: install services
	$(BIN)/python -m bench.read_path
	@command -v wrk >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null
	$(BIN)/python -m bench.over_http

clean:
	rm -rf $(VENV) discours.db discours.db-wal discours.db-shm .pytest_cache

## The mutation pass (pyproject [tool.mutmut]), module by module: `make mutants MODULES="triggers.rules"`;
## each writes mutation/<module>.md. Slow (minutes to an hour a module): run it on purpose.
mutants: install services
	$(BIN)/python -m devtools.mutants $(MODULES)
