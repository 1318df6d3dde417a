"""No function of the package is longer than :data:`MAX_LINES` lines: a longer one does several jobs.

A Typer command's declaration is the exception: its signature lists every flag with its help, and
it passes them on whole (an options object) to the module that does the work.
"""

from __future__ import annotations

import ast
from pathlib import Path

import dialectic

ROOT = Path(dialectic.__file__).parent
MAX_LINES = 80
TYPER_COMMANDS = {("cli/bench_command.py", "bench"), ("cli/debate_command.py", "debate")}
"""Commands whose signatures alone pass the limit: their bodies only build the options object."""


def long_functions() -> list[str]:
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        where = path.relative_to(ROOT).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) or node.end_lineno is None:
                continue
            lines = node.end_lineno - node.lineno + 1
            if lines > MAX_LINES and (where, node.name) not in TYPER_COMMANDS:
                found.append(f"{where}:{node.lineno} {node.name} ({lines} lines)")
    return found


def test_no_function_is_longer_than_the_limit() -> None:
    assert long_functions() == []


def test_the_exempt_commands_exist_and_only_build_their_options() -> None:
    for where, name in TYPER_COMMANDS:
        tree = ast.parse((ROOT / where).read_text(encoding="utf-8"))
        command = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == name)
        last = command.body[-1]
        body_lines = (last.end_lineno or last.lineno) - command.body[0].lineno + 1
        assert body_lines <= MAX_LINES, f"{where} {name}: its body is {body_lines} lines"
