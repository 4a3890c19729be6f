# The two commands a newcomer needs: `make run` and `make test`.
# Both go through `make setup`: a virtualenv in .venv with the C engine built in it,
# and the same engine built to WebAssembly for the Lab (hill/web/static/lab).
# uv (in the venv, scripts/venv.sh) installs the packages: pip took half a minute.

PYTHON ?= python3
# Python keeps the bytecode it compiles, whatever the shell says
# (PYTHONDONTWRITEBYTECODE): else every process of the hill and of the tests
# compiles each module it imports again (the bot's start: 3.7 s of CPU, not 1.6)
unexport PYTHONDONTWRITEBYTECODE
VENV := .venv
BIN := $(VENV)/bin
UV := $(BIN)/uv pip install --quiet --python $(BIN)/python
STAMP := $(VENV)/.installed
DEV_STAMP := $(VENV)/.dev-installed
CONFIG ?= config.toml
DATA ?= var
# four test workers on CI's two cores: the suite waits on IRC servers' pace more
# than it computes (user CPU 14 min in 23 with two; 12.5 min in all with four)
TEST_WORKERS ?= 4

# Debian packages: the local IRC server of `make run` (InspIRCd), the IRC
# servers the tests run (ngircd; InspIRCd with Anope services for accounts
# and SASL), the browser that loads the web pages and Node, which runs the
# Lab's engine in the tests (the benchmarks use them too).  `make setup`
# needs clang, lld and the WASI libc to build that engine (Debian 12's clang
# is clang 14: its wasm32 builtins).
SETUP_PACKAGES := clang lld wasi-libc libclang-rt-14-dev-wasm32
RUN_PACKAGES := inspircd
TEST_PACKAGES := ngircd inspircd anope chromium chromium-driver nodejs libltdl7
# ircd-hybrid conflicts with ngircd as a package: unpacked into /opt instead
TEST_UNPACKED := ircd-hybrid

# The Lab's engine: the engine's core and its thin WebAssembly binding, a
# reactor module (no entry point, no imports); not committed (.gitignore).
CLANG ?= clang
WASM := hill/web/static/lab/engine.wasm
WASM_SOURCES := hill/engine/wasm.c hill/engine/core/bfjoust.c
WASM_FLAGS := --target=wasm32-wasi -mexec-model=reactor -O2 -std=c11 -Wall -Wextra \
	-Wl,-z,stack-size=1048576 -Wl,--strip-all

.PHONY: setup dev run stop-ircd test test-fast lint bench clean system-setup system-run system-test

# the packages and the Lab's engine are built side by side (two jobs)
setup:
	@$(MAKE) --no-print-directory -j2 $(STAMP) $(WASM)

$(STAMP): pyproject.toml setup.py hill/engine/_engine.c hill/engine/core/bfjoust.c hill/engine/core/bfjoust.h
	sh scripts/venv.sh $(PYTHON) $(VENV)
	$(UV) -e .
	touch $(STAMP)

# the test and lint tools: for `make test` (and lint, bench), never for `make run`
dev: $(DEV_STAMP)

# (and pip: the packaging test builds the wheel with it, as the Dockerfile does)
$(DEV_STAMP): $(STAMP) pyproject.toml
	$(UV) -e '.[dev]' pip
	touch $(DEV_STAMP)

$(WASM): $(WASM_SOURCES) hill/engine/core/bfjoust.h | system-setup
	$(CLANG) $(WASM_FLAGS) -o $@ $(WASM_SOURCES)

system-setup:
	@PACKAGES="$(SETUP_PACKAGES)" sh scripts/debian-packages.sh

system-run:
	@PACKAGES="$(RUN_PACKAGES)" sh scripts/debian-packages.sh

system-test:
	@PACKAGES="$(TEST_PACKAGES)" UNPACK="$(TEST_UNPACKED)" sh scripts/debian-packages.sh

# The local IRC server outlives the bot (players stay connected when the bot
# restarts); `make stop-ircd` stops it (DATA: the data folder, default var).
run: setup system-run
	test -f $(CONFIG) || cp config.example.toml $(CONFIG)
	$(BIN)/bfjoust hill --config $(CONFIG) init --seed
	$(BIN)/bfjoust bot --config $(CONFIG) --local-ircd

stop-ircd: setup
	$(BIN)/python -m bot.ircd stop $(DATA)/ircd

test: setup dev system-test
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile

# the inner loop: no IRC server, browser, Dask cluster or slow test (pyproject's markers)
test-fast: setup dev
	$(BIN)/python -m pytest -n auto --dist loadfile -m "not irc and not browser and not cluster and not slow"

lint: setup dev
	$(BIN)/ruff check .
	$(BIN)/mypy

bench: setup dev system-run system-test
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
	$(BIN)/python bench/lab_engine.py
	$(BIN)/python bench/lab_debugger.py

clean:
	rm -rf $(VENV) build *.egg-info hill/engine/*.so $(WASM)
