# The two commands of the README: `make run` and `make test`. Everything else is what they need.
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
export PIP_DISABLE_PIP_VERSION_CHECK := 1

.PHONY: run test install services migrate lint bench mutants clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV) 2>/dev/null || python3 -m venv $(VENV)

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	@touch $(STAMP)

install: $(STAMP)

## Serve on 127.0.0.1:8000 (GraphiQL at /graphql); SQLite + in-process Redis unless DATABASE_URL/REDIS_URL.
run: install
	$(BIN)/discours migrate
	$(BIN)/discours seed --if-empty
	$(BIN)/discours serve --host 127.0.0.1 --port 8000

services:
	@bash scripts/ensure-services.sh

## The whole suite against real PostgreSQL and Redis on 127.0.0.1 (installed and started if missing), then
## the Redis-heavy modules again on a three-master Redis Cluster of its own (devtools/on_cluster.py).
test: install services
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/lint-imports --no-cache
	$(BIN)/pytest -q
	$(BIN)/python -m devtools.on_cluster

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

## The mutation pass over the invalidation path (pyproject [tool.mutmut]); slow: run it on purpose.
mutants: install services
	$(BIN)/python -m devtools.mutants
