"""The package's version, as ``pyproject.toml`` states it (``tests/cli/test_app.py`` keeps the two equal).

``dialectic --version`` reads it here: ``importlib.metadata`` costs more to import than the rest of the
command (tens of milliseconds on a small machine)."""

__version__ = "0.1.0"
