"""How a debate's agents get its context directory (``debate.context``): tools, pasted text, or not at all.

Decided once when a debate starts, from the configuration and what each agent's provider can
do, and saved with the debate (the resolved mode and the directory's absolute path), so a
resumed debate reads the directory the same way:

* ``paste``: the directory's text files are gathered into one block saved as the debate's
  ``context`` (today's behaviour); every prompt carries it.
* ``tools``: the directory is opened (its files read, its search index built or taken from
  the cache) and each agent whose provider does tool calling gets the tools; an agent whose
  provider does not gets the pasted text in its own prompts instead (one warning names them).
  A provider that refuses tools at run time moves its agent to pasted text the same way.
* ``off``, or no directory: nothing.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from dialectic.agents.participants import Speaker
from dialectic.agents.tool_loop import ToolAccess, ToolsRejected
from dialectic.context.files import check_directory, gather_context, listed
from dialectic.context.search_index import default_cache_dir, require_fts5
from dialectic.context.tools import ContextDirectory, ToolLimits
from dialectic.core.config import ContextSettings, SystemConfig
from dialectic.engine.roster import Roster
from dialectic.llm.base import supports_tools


@dataclass
class FilesAccess:
    """The debate's context directory as its speakers see it."""

    mode: str = "off"
    directory: ContextDirectory | None = None
    max_tool_calls: int = 6
    tool_speakers: set[str] = field(default_factory=set)
    """Ids of the speakers (agents, and the judge with ``judgeTools``) that read the directory through tools."""
    pasted_for: set[str] = field(default_factory=set)
    """Ids of the agents that get the pasted text in their prompts although the debate is in ``tools`` mode."""
    warnings: list[str] = field(default_factory=list)
    _pasted: str | None = None

    def tools_for(self, speaker: Speaker) -> ToolAccess | None:
        if self.directory is None or speaker.id not in self.tool_speakers:
            return None
        return ToolAccess(self.directory, self.max_tool_calls)

    def problem_for(self, speaker: Speaker, problem: str) -> str:
        """``problem`` as ``speaker`` is given it: with the pasted text when it reads the files that way."""
        if speaker.id not in self.pasted_for:
            return problem
        pasted = self._pasted_text()
        return f"{problem}\n\n{pasted}" if pasted else problem

    def tools_refused(self, speaker: Speaker, reason: str) -> str:
        """``speaker``'s provider refused tools: it reads pasted text from now on. The warning to show."""
        self.tool_speakers.discard(speaker.id)
        self.pasted_for.add(speaker.id)
        return f"{speaker.name}'s provider refused tool calls ({reason}); it gets the context files pasted instead"

    def close(self) -> None:
        if self.directory is not None:
            self.directory.close()

    def _pasted_text(self) -> str:
        if self._pasted is None:
            self._pasted = gather_context(self.directory.root).text if self.directory is not None else ""
        return self._pasted


T = TypeVar("T")


async def with_tools_fallback(
    files: FilesAccess, speaker: Speaker, warn: Callable[[str], None], attempt: Callable[[], Awaitable[T]]
) -> T:
    """``attempt()``; when the provider refuses tools, once more with ``speaker`` moved to pasted text."""
    try:
        return await attempt()
    except ToolsRejected as rejected:
        warn(files.tools_refused(speaker, str(rejected)))
        return await attempt()


def context_root(settings: ContextSettings, config_dir: Path) -> Path | None:
    """The context directory, absolute (a relative one is relative to the configuration's directory)."""
    if not settings.dir or settings.mode == "off":
        return None
    return (config_dir / Path(settings.dir).expanduser()).resolve()


def resolved_mode(settings: ContextSettings, roster: Roster) -> str:
    """The configured mode, or (unset) ``tools`` when every agent's provider does tool calling (a human seat's
    aside), else ``paste``."""
    if settings.mode is not None:
        return settings.mode
    models = [a for a in roster.agents if not a.config.is_human]  # a person reads the files as they like
    return "tools" if all(supports_tools(a.client.provider) for a in models) else "paste"


def with_resolved_context(config: SystemConfig, root: Path | None, mode: str) -> SystemConfig:
    """``config`` with the directory made absolute and the mode resolved: what the debate saves."""
    context = config.debate.context
    if root is None:
        return config
    resolved = context.model_copy(update={"dir": str(root), "mode": mode})
    return config.model_copy(update={"debate": config.debate.model_copy(update={"context": resolved})})


def gathered_paste(root: Path, warnings: list[str]) -> str | None:
    """The pasted block of ``paste`` mode, with a warning for skipped files or an empty directory."""
    gathered = gather_context(root)
    if gathered.skipped:
        warnings.append(f"context directory {root}: skipped {gathered.skipped_summary()}")
    if not gathered.text:
        warnings.append(f"context directory {root} holds no readable text files; no context is added")
        return None
    return gathered.text


async def open_files_access(settings: ContextSettings, root: Path, mode: str, roster: Roster) -> FilesAccess:
    """Open the directory for ``tools`` mode (reading and indexing off the event loop) and pick who gets tools."""
    if mode != "tools":
        return FilesAccess(mode=mode)
    check_directory(root)
    require_fts5()
    limits = ToolLimits(contribution_chars=settings.max_read_chars or ToolLimits().contribution_chars)
    directory = await asyncio.to_thread(
        ContextDirectory.open, root, cache_dir=default_cache_dir(os.environ), limits=limits
    )
    access = FilesAccess(mode=mode, directory=directory, max_tool_calls=settings.max_tool_calls)
    without = []
    for agent in roster.agents:
        if agent.config.is_human:
            continue  # a person reads the directory as they like
        if supports_tools(agent.client.provider):
            access.tool_speakers.add(agent.id)
        else:
            access.pasted_for.add(agent.id)
            without.append(agent.name)
    if settings.judge_tools and supports_tools(roster.judge.client.provider):
        access.tool_speakers.add(roster.judge.id)
    if without:
        access.warnings.append(
            f"the provider of {', '.join(without)} does not do tool calling; "
            "they get the context files pasted into their prompts instead"
        )
    if directory.skipped:
        skipped = [f"{path} ({why})" for path, why in sorted(directory.skipped.items())]
        access.warnings.append(f"context directory {root}: skipped {listed(skipped)}")
    if not directory.texts:
        access.warnings.append(f"context directory {root} holds no readable text files")
    return access
