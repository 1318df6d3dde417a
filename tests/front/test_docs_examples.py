"""Every Python example of the documentation's API page runs as printed (the scripted model: no key, no network)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import PROVIDER_ENV

PAGE = Path(__file__).parents[2] / "docs" / "api.md"
BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)


def examples() -> list[str]:
    return [
        code
        for code in BLOCK.findall(PAGE.read_text(encoding="utf-8"))
        if 'provider="scripted"' in code or "no-such-config" in code
    ]


def test_the_page_has_examples() -> None:
    assert len(examples()) >= 4


@pytest.mark.parametrize("code", examples(), ids=lambda code: code.strip().splitlines()[-1][:40])
def test_an_example_runs_as_printed(code: str, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in PROVIDER_ENV}
    env["DIALECTIC_HOME"] = str(tmp_path / "home")
    shown = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.strip() and "Traceback" not in shown.stderr
