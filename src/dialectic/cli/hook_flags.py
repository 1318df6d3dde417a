"""``--notify URL`` and ``--on-complete CMD``: the post-debate hooks of one command, and running them.

The hooks in force are the debate's saved configuration's (``hooks``), with the flags added.
They run once the debate is saved as finished (:data:`dialectic.reporting.hooks.FINISHED`), after
the results are written, and the command waits for them within their bounds: a hook's failure is
one warning line and never changes the exit code. Imported when a command runs, never while the
app is built.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from dialectic.core.config import HookSettings, WebhookTarget
from dialectic.core.errors import InvalidArgumentsError

if TYPE_CHECKING:
    from dialectic.cli.output import OutputTarget
    from dialectic.store import DebateStore


@dataclass(frozen=True)
class HookFlags:
    """What the command line adds to the configuration's hooks."""

    notify: tuple[WebhookTarget, ...] = ()
    on_complete: str | None = None

    def over(self, settings: HookSettings) -> HookSettings:
        update: dict[str, object] = {}
        if self.notify:
            update["on_complete"] = [*settings.on_complete, *self.notify]
        if self.on_complete is not None:
            update["on_complete_command"] = self.on_complete
        return settings.model_copy(update=update) if update else settings


def checked_hook_flags(notify: Sequence[str] | None, on_complete: str | None) -> HookFlags:
    """The flags, checked before a debate is created (a bad URL is a usage error, exit 2)."""
    targets = []
    for url in notify or ():
        try:
            targets.append(WebhookTarget(url=url))
        except ValueError as exc:
            raise InvalidArgumentsError(f"--notify {url}: not an http:// or https:// URL") from exc
    if on_complete is not None and not on_complete.strip():
        raise InvalidArgumentsError("--on-complete needs a command")
    return HookFlags(tuple(targets), on_complete)


def written_links(
    debate_id: str, status: str, output: OutputTarget | None, report: OutputTarget | None
) -> dict[str, str]:
    """The files the command wrote for the debate (written only for a completed one), as absolute paths."""
    from dialectic.cli.output import report_file

    links: dict[str, str] = {}
    if status != "completed":
        return links
    if output is not None and not output.discard and output.path.is_file():
        links["export"] = str(output.path.resolve())
    if report is not None and not report.discard:
        path = report_file(report, debate_id)
        if path.is_file():
            links["report"] = str(path.resolve())
    return links


def run_hooks(
    store: DebateStore,
    debate_id: str | None,
    flags: HookFlags,
    *,
    output: OutputTarget | None = None,
    report: OutputTarget | None = None,
    changed_after: datetime | None = None,
) -> None:
    """Run the finished debate's hooks and wait for them (bounded). Never raises: the debate is saved.

    ``changed_after``: a resumed debate's last change before the command; a debate this command did not
    change (its resume refused before it ran) runs no hook."""
    if debate_id is None:
        return
    try:
        state = store.load(debate_id)
        if changed_after is not None and state.updated_at <= changed_after:
            return
        saved = state.saved_config()
        settings = flags.over(saved.hooks if saved is not None else HookSettings())
        if not settings.active:
            return
        from dialectic.reporting.hooks import fire

        run = fire(settings, state, links=written_links(debate_id, state.status, output, report))
    except Exception as exc:  # the debate is saved: nothing about its hooks may change the command's outcome
        from dialectic.reporting.hooks import stderr_warning

        stderr_warning(f"debate {debate_id}: hooks not run: {exc}")
        return
    if run is not None:
        run.wait()
