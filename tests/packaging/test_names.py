"""The distribution is ``dialectic-debate`` (``dialectic`` on PyPI is an unrelated project): what the
code reads its version from and the install commands it prints must name it, not the import package."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from dialectic.core.extras import install_hint

ROOT = Path(__file__).resolve().parents[2]
DISTRIBUTION = "dialectic-debate"

# `dialectic[web]` (an install of the unrelated project) and `version("dialectic")` (not installed)
WRONG_EXTRA = re.compile(r"(?<![\w.-])dialectic\[")
WRONG_VERSION = re.compile(r"""(?:version|distribution|metadata)\(\s*["']dialectic["']\s*\)""")


def project() -> dict[str, object]:
    with (ROOT / "pyproject.toml").open("rb") as file:
        table: dict[str, object] = tomllib.load(file)["project"]
    return table


def test_the_distribution_is_named_dialectic_debate_and_installs_the_dialectic_command() -> None:
    table = project()
    assert table["name"] == DISTRIBUTION
    assert table["scripts"] == {"dialectic": "dialectic.cli.app:main"}
    extras = table["optional-dependencies"]
    assert isinstance(extras, dict)
    own = [req for reqs in extras.values() for req in reqs if re.match(r"dialectic\b", req)]
    assert all(req.startswith(f"{DISTRIBUTION}[") for req in own), own


def test_install_hints_name_the_distribution() -> None:
    assert install_hint("web") == f"pip install '{DISTRIBUTION}[web]'"


def test_no_source_file_names_the_import_package_as_the_distribution() -> None:
    found = []
    for path in sorted((ROOT / "src" / "dialectic").rglob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if WRONG_EXTRA.search(line) or WRONG_VERSION.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert found == [], "\n".join(found)
