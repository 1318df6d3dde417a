"""Fixtures for the whole suite."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _debates_stay_out_of_the_users_data_directory(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every test gets its own data directories: a test that does not choose a store (or removes
    ``DIALECTIC_HOME``) must never read or write the debates in the user's data directory."""
    root = tmp_path_factory.mktemp("data")
    monkeypatch.setenv("DIALECTIC_HOME", str(root / "home"))
    monkeypatch.setenv("XDG_DATA_HOME", str(root / "xdg"))
