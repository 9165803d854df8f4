# Two commands do all the set-up: `make demo` and `make test`. Both create .venv when needed.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
DEMO_DB := .ragchat/demo.db
RAGCHAT := $(BIN)/ragchat
ASK := $(RAGCHAT) ask --db $(DEMO_DB) --session demo

.PHONY: install demo test lint bench docs clean

install: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[offline-model,test,lint]'
	touch $(STAMP)

demo: install
	$(RAGCHAT) ingest sample_docs --db $(DEMO_DB)
	$(RAGCHAT) search "who may witness a will" -k 3 --db $(DEMO_DB)
	$(ASK) --new "What makes a will legally binding in South Africa?"
	$(ASK) "what age must a witness be?"
	$(ASK) "summarize it"
	$(ASK) "Now tell me about rainwater harvesting"
	$(RAGCHAT) inspect turn 2 --session demo --db $(DEMO_DB)

test: install
	$(BIN)/python -m pytest -q

lint: install
	$(BIN)/ruff check ragchat tests benchmarks tools
	$(BIN)/ruff format --check ragchat tests benchmarks tools
	$(BIN)/mypy

bench: install
	$(BIN)/python benchmarks/bench.py

docs: install
	$(BIN)/python tools/cli_reference.py

clean:
	rm -rf $(VENV) .ragchat .pytest_cache
