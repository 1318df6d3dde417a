"""Prompt templates shipped inside the package.

Phase prompts are Jinja2 templates (``prompts/*.md.j2``) rendered with
``StrictUndefined``, so a missing variable is an error rather than an empty
string. Role system prompts are plain Markdown files under ``prompts/roles/``.
"""

from __future__ import annotations

from functools import cache, lru_cache
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined

_PACKAGE = "dialectic.agents"
_PROMPTS_DIR = "prompts"
_ROLES_DIR = "roles"
_TEMPLATE_SUFFIX = ".md.j2"
_ROLE_SUFFIX = ".md"

FALLBACK_ROLE = "generalist"
JUDGE_ROLE = "judge"

REASONING_KIND = "reasoning"
_REASONING_DIR = "reasoning"
REASONING_AGENT_ROLE = "agent"


@lru_cache(maxsize=1)
def environment() -> Environment:
    """The shared Jinja2 environment for the packaged prompt templates."""
    return Environment(
        loader=PackageLoader(_PACKAGE, _PROMPTS_DIR),
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def render(template_name: str, **variables: Any) -> str:
    """Render a packaged template, e.g. ``render("propose.md.j2", ...)``.

    The ``.md.j2`` suffix may be omitted (``render("propose", ...)``).
    Raises ``jinja2.UndefinedError`` when a variable the template uses is missing.
    """
    name = template_name if template_name.endswith(".j2") else template_name + _TEMPLATE_SUFFIX
    return environment().get_template(name).render(**variables)


@cache
def phase_template(name: str, kind: str) -> str:
    """The template of a phase (``propose``, ``critique``, ``refine``, ``judge_synthesize``) for a problem kind.

    A reasoning problem gets the reasoning-first variant under ``prompts/reasoning/`` when there
    is one; every other phase, and every design problem, gets the design template.
    """
    if kind == REASONING_KIND:
        variant = f"{_REASONING_DIR}/{name}{_TEMPLATE_SUFFIX}"
        if resources.files(_PACKAGE).joinpath(_PROMPTS_DIR, variant).is_file():
            return variant
    return name + _TEMPLATE_SUFFIX


def _roles_dir() -> Traversable:
    return resources.files(_PACKAGE).joinpath(_PROMPTS_DIR, _ROLES_DIR)


@lru_cache(maxsize=1)
def _role_files() -> tuple[str, ...]:
    names = (
        entry.name[: -len(_ROLE_SUFFIX)]
        for entry in _roles_dir().iterdir()
        if entry.is_file() and entry.name.endswith(_ROLE_SUFFIX)
    )
    return tuple(sorted(names))


def known_roles() -> tuple[str, ...]:
    """Built-in debater roles (role files present, excluding the judge), sorted."""
    return tuple(name for name in _role_files() if name != JUDGE_ROLE)


@cache
def builtin_role_prompt(role: str, kind: str = "design") -> str:
    """System prompt of a built-in role; unknown roles get the generalist prompt.

    ``"judge"`` returns the judge's system prompt. On a reasoning problem every debater gets
    the one reasoning prompt (a role's design concerns do not help a calculation) and the
    judge the reasoning judge's.
    """
    if kind == REASONING_KIND:
        name = JUDGE_ROLE if role.strip().lower() == JUDGE_ROLE else REASONING_AGENT_ROLE
        path = resources.files(_PACKAGE).joinpath(_PROMPTS_DIR, _REASONING_DIR, _ROLES_DIR, name + _ROLE_SUFFIX)
        return path.read_text(encoding="utf-8").strip()
    key = role.strip().lower()
    if key not in _role_files():
        key = FALLBACK_ROLE
    return _roles_dir().joinpath(key + _ROLE_SUFFIX).read_text(encoding="utf-8").strip()


@cache
def reasoning_instructions() -> str:
    """The words of every reasoning-first prompt (templates and role prompts), as written: a phrase of
    them found as a reply's answer ("No error found", "<final answer>") was copied, not worked out."""
    root = resources.files(_PACKAGE).joinpath(_PROMPTS_DIR, _REASONING_DIR)
    folders = [root, root.joinpath(_ROLES_DIR)]
    return "\n".join(
        entry.read_text(encoding="utf-8")
        for folder in folders
        for entry in sorted(folder.iterdir(), key=lambda e: e.name)
        if entry.is_file() and entry.name.endswith((_TEMPLATE_SUFFIX, _ROLE_SUFFIX))
    )
