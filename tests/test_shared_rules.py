"""Each shared rule has one home: the DIALECTIC_* variables are read in core/environment.py only, and a saved
configuration is read through DebateState (issue 55's "one home for each shared rule")."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import dialectic
from dialectic.core import environment

ROOT = Path(dialectic.__file__).parent
SETS_THEM = {"reporting/hooks.py"}  # the variables a hook's process is given: written, not read
VARIABLE = re.compile(r"DIALECTIC_[A-Z_]+")


def sources() -> list[tuple[str, str]]:
    return [(str(p.relative_to(ROOT)), p.read_text(encoding="utf-8")) for p in sorted(ROOT.rglob("*.py"))]


def test_only_core_environment_names_a_dialectic_variable() -> None:
    named = []
    for path, text in sources():
        if path in {"core/environment.py", *SETS_THEM}:
            continue
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and VARIABLE.fullmatch(node.value):
                named.append(f"{path}: {node.value}")
    assert named == []


def test_the_environment_accessors_trim_and_treat_blank_as_unset() -> None:
    env = {environment.HOME: "  /data  ", environment.TOKEN: "   ", "DIALECTIC_OTHER": "x", "PATH": "/bin"}
    assert environment.home(env) == "/data" and environment.token(env) is None and environment.store(env) is None
    assert environment.own_variables(env) == {
        environment.HOME: "  /data  ",
        environment.TOKEN: "   ",
        "DIALECTIC_OTHER": "x",
    }


def test_a_saved_configuration_is_read_through_the_state() -> None:
    found = [
        path
        for path, text in sources()
        if path != "core/domain.py" and re.search(r"model_validate\(\w+\.config\)", text)
    ]
    assert found == []


def test_the_problem_text_rule_lives_in_core_config() -> None:
    """The CLI, the web API, MCP, batch and the Python API all call core.config.problem_text; none repeats it."""
    repeated = [path for path, text in sources() if path != "core/config.py" and '"the problem is empty"' in text]
    assert repeated == []


def test_one_did_you_mean() -> None:
    """Every suggestion of a name comes from core/spelling.py (CLI flags and commands, API fields, providers,
    formats, bench datasets): no module matches names on its own."""
    own = [path for path, text in sources() if path != "core/spelling.py" and "get_close_matches" in text]
    assert own == []
