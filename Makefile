# The two commands a newcomer needs: `make run` and `make test`.
# Both go through `make setup`: a virtualenv in .venv with the C engine built in it.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
CONFIG ?= config.toml
DATA ?= var

# Debian packages: the local IRC server of `make run` (InspIRCd), the IRC
# servers the tests run (ngircd; InspIRCd with Anope services for accounts
# and SASL) and the browser that loads the web pages.
RUN_PACKAGES := inspircd
TEST_PACKAGES := ngircd inspircd anope chromium chromium-driver

.PHONY: setup run stop-ircd test test-fast lint bench clean system-run system-test

setup: $(STAMP)

$(STAMP): pyproject.toml setup.py hill/engine/_engine.c
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

system-run:
	@PACKAGES="$(RUN_PACKAGES)" sh scripts/debian-packages.sh

system-test:
	@PACKAGES="$(TEST_PACKAGES)" sh scripts/debian-packages.sh

# The local IRC server outlives the bot (players stay connected when the bot
# restarts); `make stop-ircd` stops it (DATA: the data folder, default var).
run: setup system-run
	test -f $(CONFIG) || cp config.example.toml $(CONFIG)
	$(BIN)/bfjoust hill --config $(CONFIG) init --seed
	$(BIN)/bfjoust bot --config $(CONFIG) --local-ircd

stop-ircd: setup
	$(BIN)/python -m bot.ircd stop $(DATA)/ircd

test: setup system-test
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/python -m pytest -n auto --dist loadfile

# the inner loop: no IRC server, browser, Dask cluster or slow test (pyproject's markers)
test-fast: setup
	$(BIN)/python -m pytest -n auto --dist loadfile -m "not irc and not browser and not cluster and not slow"

lint: setup
	$(BIN)/ruff check .
	$(BIN)/mypy

bench: setup system-run
	$(BIN)/python bench/compile.py
	$(BIN)/python bench/matrix.py
	$(BIN)/python bench/submit.py
	$(BIN)/python bench/hill_statistics.py
	$(BIN)/python bench/ladder.py --quick --seeds 3
	$(BIN)/python bench/ladder_hill.py
	$(BIN)/python bench/web.py
	$(BIN)/python bench/history.py
	$(BIN)/python bench/clone_burst.py
	$(BIN)/python bench/trace_load.py
	$(BIN)/python bench/tournament.py
	$(BIN)/python bench/contest.py
	$(BIN)/python bench/busy_hill.py

clean:
	rm -rf $(VENV) build *.egg-info hill/engine/*.so
