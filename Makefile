# StoryGraph: the two commands are `make run` (the app) and `make test` (the whole suite).
PY_SYS ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
DEVSTAMP := $(VENV)/.installed-dev
# uv (from pip's own indexes and constraints: scripts/install_packages.py) or pip.
INSTALLER ?= uv
INSTALL := $(PY) scripts/install_packages.py --installer $(INSTALLER)
HOST   ?= 127.0.0.1
PORT   ?= 8501

.PHONY: run test test-neo4j screenshots install deps model lint unit bench clean-data help

help:
	@echo "make run    - install what is missing and start the app on http://$(HOST):$(PORT)"
	@echo "             (the embedded model installs in the background meanwhile)"
	@echo "make test   - install what is missing and run lint + the whole test suite"
	@echo "make unit   - the fast tier for every change: tests/unit, no model, no browser,"
	@echo "             no server (about 1.5 minutes on 2 cores)"
	@echo "make model  - install the embedded model (llama.cpp server + Qwen2.5-Coder-1.5B)"
	@echo "make bench  - run the benchmarks and print their tables"
	@echo "make screenshots - retake docs/screenshots/*.png from the running app (make run first)"
	@echo "make test-neo4j  - the store contract on the Neo4j of NEO4J_URI (EMPTIES it)"

$(VENV)/bin/python:
	$(PY_SYS) -m venv $(VENV)

$(STAMP): requirements.txt requirements-installer.txt | $(VENV)/bin/python
	$(INSTALL) requirements.txt
	touch $@

$(DEVSTAMP): requirements.txt requirements-dev.txt requirements-installer.txt | $(VENV)/bin/python
	$(INSTALL) requirements-dev.txt
	touch $(STAMP) $@

install: $(STAMP)

# The embedded model, only when no other model is configured (idempotent, quick when present).
model: $(STAMP)
	$(PY) -m storygraph.llm.install --if-needed

# The app opens as soon as the Python packages are in; the embedded model (a llama.cpp build and
# a 1.1 GB join) installs in a detached process meanwhile (log: data/logs/model-install.log) and
# the app shows its progress, answers without a model until then, and picks the model up.
run: install
	$(PY) -m storygraph.llm.install --if-needed --background
	$(PY) -m streamlit run app.py --server.address $(HOST) --server.port $(PORT) \
		--server.headless true --browser.gatherUsageStats false

# Test-only system pieces: Debian chromium + CJK fonts, and Neo4j's Cypher parser from npm.
deps: $(DEVSTAMP)
	bash scripts/ensure_system_deps.sh
	npm ci --prefix tools/cypher-lint --no-audit --no-fund --loglevel=error

lint: $(DEVSTAMP)
	$(PY) -m ruff check .

# The slow tests drive the real embedded model, so the suite installs it whatever .env says.
test: deps lint
	STORYGRAPH_MODEL_DIR=$(CURDIR)/data/models $(PY) -m storygraph.llm.install
	$(PY) -m pytest -q --timeout=900 --durations=25

# Neo4j cases empty their database, so they run only when asked for, never because NEO4J_URI
# happens to be exported (plain `make test` deselects them).
test-neo4j: $(DEVSTAMP)
	$(PY) -m pytest -q -m neo4j

# The README's pictures, from the app running with the configured (real) model: start `make run`
# in another terminal first. The test suite never writes docs/screenshots/ (its own pictures go
# to tests/e2e/artifacts/).
screenshots: deps
	$(PY) scripts/screenshots.py --load-sample

# The fast tier, run on every change: no model, no browser, no server process, under 2 minutes on
# 2 cores. Tests that start servers, run pytest in a subprocess or read whole stories belong in
# tests/integration (make test runs every folder).
unit: $(DEVSTAMP)
	$(PY) -m pytest -q tests/unit

bench: install model
	$(PY) -m benchmarks

clean-data:
	rm -rf data
