PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: venv test demo clean

venv: $(STAMP)

# Re-installs whenever pyproject.toml changes (the stamp is older than it).
$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

# pytest exits 5 when it collected no tests: with this suite that means collection broke.
test: venv
	@status=0; $(BIN)/python -m pytest -q || status=$$?; \
	if [ $$status -eq 5 ]; then echo "make test: pytest collected no tests; the test suite is broken" >&2; fi; \
	exit $$status

demo: venv
	bash scripts/demo.sh

clean:
	rm -rf $(VENV) .pytest_cache build dist src/*.egg-info
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
