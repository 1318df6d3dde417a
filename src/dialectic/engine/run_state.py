"""What every node gets: the debate's state, its participants, the store and the event bus."""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from dialectic.agents.participants import Speaker
from dialectic.agents.tool_loop import observing_tools
from dialectic.context.history import format_clarifications
from dialectic.core import events as ev
from dialectic.core.changes import (
    Change,
    ContributionRecorded,
    ReceiptRecorded,
    apply_change,
    dump_change,
    parse_change,
)
from dialectic.core.config import BudgetSettings
from dialectic.core.domain import (
    CallStatus,
    Contribution,
    ContributionMetadata,
    ContributionType,
    DebateState,
    ToolCallRecord,
)
from dialectic.core.errors import ProviderError, StoreError
from dialectic.core.events import EventBus
from dialectic.core.ledger import LedgerTotals
from dialectic.core.pricing import PriceTable
from dialectic.core.receipts import ReceiptSigner, make_receipt
from dialectic.engine.budget import BudgetGuard
from dialectic.engine.calls import CallInfo, CallScope, CallWatch, CallWatcher
from dialectic.engine.files_access import FilesAccess
from dialectic.engine.ledger_book import LedgerBook
from dialectic.engine.pausing import PauseRequested, RunControl
from dialectic.engine.roster import Roster
from dialectic.engine.seats import PeopleWaited, SeatDesk, TurnChannel, played_by
from dialectic.engine.store_outage import outage_bound_s, patient_append
from dialectic.engine.windows import WindowBook
from dialectic.llm.base import Completion
from dialectic.llm.client import RetryHook, streaming_to
from dialectic.llm.human import HumanTurnWanted, seated
from dialectic.llm.observe import observing
from dialectic.store.base import DebateStore

T = TypeVar("T")
log = logging.getLogger(__name__)


class Work(Protocol):
    """The debate's scheduled work (:class:`~dialectic.engine.work.DebateWork`), as the run holds it.

    A protocol, not the class: the work is built on this module's :class:`RunState`."""

    def start_rounds(self, first: int) -> None: ...

    def release(self) -> None: ...

    async def discard_beyond(self, number: int) -> None: ...

    async def cancel(self) -> None: ...


@dataclass
class RunState:
    state: DebateState
    store: DebateStore
    bus: EventBus
    roster: Roster
    last_progress: float = field(default_factory=time.monotonic)
    """When work was last saved (``time.monotonic``): the turn formats' round timeout measures from it."""
    work: Work | None = None
    """The debate's task graph for this run; built by the first node that needs it."""
    control: RunControl = field(default_factory=RunControl)
    """Counts the calls in flight and refuses new ones once a pause was requested."""
    prices: PriceTable = field(default_factory=PriceTable.of)
    """What the debate's calls cost (the configuration's ``pricing`` over the built-in table)."""
    guard: BudgetGuard = field(default_factory=lambda: BudgetGuard(BudgetSettings(), PriceTable.of(), LedgerTotals()))
    """The debate's budget, asked before every provider request."""
    watchers: list[CallWatcher] = field(default_factory=list)
    """Told of every call (the tracer)."""
    book: LedgerBook = field(default_factory=LedgerBook)
    """Ledger entries of calls that ended, until they are saved with their results."""
    files: FilesAccess = field(default_factory=FilesAccess)
    """The context directory as the speakers read it (tools, pasted text, or nothing)."""
    windows: WindowBook = field(default_factory=WindowBook)
    """Each participant's context window and what its prompts took (see :mod:`dialectic.engine.windows`)."""
    turns: TurnChannel | None = None
    """How the person in a human seat is asked while the debate runs; ``None``: a human turn suspends it
    (see :mod:`dialectic.engine.seats`)."""
    people: PeopleWaited = field(default_factory=PeopleWaited)
    """The human turns waited for now (the round's watchdog does not count that time as a stall)."""
    signer: ReceiptSigner | None = None
    """Signs the receipt saved when the debate completes; ``None``: the receipt is not signed."""
    _deferred: list[Change] = field(default_factory=list)
    _deferred_events: list[ev.Event] = field(default_factory=list)

    @property
    def debate_id(self) -> str:
        return self.state.id

    @property
    def problem(self) -> str:
        if self.state.context:
            return f"{self.state.problem}\n\n{self.state.context}"
        return self.state.problem

    @property
    def fallbacks(self) -> dict[str, Speaker]:
        """Human seat id → the participant its fallback model plays in its place."""
        return self.roster.fallbacks

    def waiting_for_people(self) -> AbstractContextManager[None]:
        return self.people.waiting()

    def stalled_since(self, last: float, clock: Callable[[], float]) -> float:
        """When the run last progressed, for a round's watchdog: now, while a person writes a turn."""
        return clock() if self.people.count else last

    def problem_for(self, speaker: Speaker) -> str:
        """The problem as ``speaker`` is given it (with the context files pasted when it reads them that way)."""
        return self.files.problem_for(speaker, self.problem)

    def record(self, *changes: Change, receipt: bool = False, wait_for_store: bool = True) -> None:
        """Append to the store first, then apply in memory: the saved log is the truth.

        The ledger entries of the calls whose results ``changes`` keep go into the same append
        (see :mod:`dialectic.engine.ledger_book`), and so do the participants' window notes that
        changed since the last append. With ``receipt`` (the append that completes the debate), the
        debate's receipt goes into it too, covering the whole log with this append: one transaction,
        so no completed debate is ever saved without its receipt. Without ``wait_for_store``, an
        unreachable store is tried once (:func:`~dialectic.engine.store_outage.patient_append` waits for it).
        """
        calls = self.book.settle(changes, self.state.current_round)
        saved: tuple[Change, ...] = (*changes, *calls, *self.windows.notes())
        if receipt:
            saved = (*saved, self._receipt_over(saved))
        if wait_for_store:
            last_seq = patient_append(self.store, self.state.id, saved, on_wait=self._store_unreachable)
        else:
            last_seq = self.store.append(self.state.id, *saved)
        for change in saved:
            apply_change(self.state, change)
        self.last_progress = time.monotonic()
        self.emit(ev.ChangesSaved(self.debate_id, last_seq, saved))
        for call in calls:
            self.emit(ev.CallSaved(self.debate_id, call.entry))

    def _store_unreachable(self, error: StoreError) -> None:
        self.warn(f"{error.message}; waiting for it (up to {outage_bound_s():g} s) before saving the debate's progress")

    def _receipt_over(self, saving: tuple[Change, ...]) -> ReceiptRecorded:
        """The receipt of the stored log followed by ``saving``, each change as the store will read it back."""
        log = [*self.store.changes(self.debate_id), *(parse_change(dump_change(change)) for change in saving)]
        return ReceiptRecorded(receipt=make_receipt(self.debate_id, log, signer=self.signer))

    def defer(self, change: Change, event: ev.Event | None = None) -> None:
        """Save ``change`` with the cursor move that ends this node (one transaction), then announce ``event``."""
        self._deferred.append(change)
        if event is not None:
            self._deferred_events.append(event)

    def commit(self, *closing: Change, receipt: bool = False) -> None:
        """Save the deferred changes and ``closing`` in one append (with the debate's receipt, when
        ``receipt``: see :meth:`record`), then publish the deferred events."""
        changes, events = self._deferred + list(closing), self._deferred_events
        self._deferred, self._deferred_events = [], []
        self.record(*changes, receipt=receipt)
        for event in events:
            self.emit(event)

    def take_uncommitted(self) -> None:
        """Drop deferred changes of a node that did not finish (they are redone on resume)."""
        self._deferred, self._deferred_events = [], []

    def emit(self, event: ev.Event) -> None:
        self.bus.publish(event)

    def warn(self, message: str) -> None:
        self.emit(ev.Warning(self.debate_id, message))

    def retry_hook(self, speaker: Speaker, activity: str) -> RetryHook:
        def hook(error: ProviderError, attempt: int, wait_s: float) -> None:
            self.emit(ev.CallRetrying(self.debate_id, speaker.name, activity, error.message, attempt, wait_s))

        return hook

    async def announce(
        self,
        speaker: Speaker,
        activity: str,
        call: Awaitable[T],
        *,
        round_number: int | None = None,
        kind: str | None = None,
        target_id: str | None = None,
    ) -> T:
        """Await one LLM call between ``AgentStarted`` and ``AgentCompleted`` (``ok`` says how it ended).

        The reply streams as :class:`~dialectic.core.events.TokenDelta` events while a subscriber wants
        them. A pausing run refuses the call before it starts (:class:`PauseRequested`). Every
        provider request the call makes is observed (:class:`~dialectic.engine.calls.CallScope`):
        the budget is asked first, the tokens and cost are counted, the watchers are told; the
        call's ledger entry then waits in :attr:`book` to be saved with its result.
        """
        try:
            self.control.begin_call()
        except PauseRequested:
            if inspect.iscoroutine(call):
                call.close()  # it never runs: no "coroutine was never awaited" warning
            raise
        info = CallInfo(
            debate_id=self.debate_id,
            kind=kind or activity,
            activity=activity,
            agent_id=speaker.id,
            agent_name=speaker.name,
            provider=speaker.config.provider,
            model=speaker.config.model,
            round_number=round_number,
            target_id=target_id,
        )
        scope = CallScope(info, guard=self.guard, prices=self.prices, watches=self._watches_of(info))
        self.emit(ev.AgentStarted(self.debate_id, speaker.id, speaker.name, activity, round_number, kind, target_id))
        status: CallStatus = "failed"
        failure: BaseException | None = None
        desk = seated(SeatDesk(self, speaker, info)) if speaker.config.is_human else nullcontext()
        try:
            with observing(scope), observing_tools(scope), desk:
                if self.bus.wants_deltas:
                    with streaming_to(self._delta_hook(speaker, round_number, kind, target_id)):
                        result = await call
                else:
                    result = await call
            status = "ok"
            return result
        except asyncio.CancelledError as exc:
            status, failure = "cancelled", exc
            raise
        except BaseException as exc:
            failure = exc
            raise
        finally:
            self.control.end_call()
            error = None if failure is None or status == "cancelled" else (str(failure) or type(failure).__name__)
            # A human turn that waits for its text was not a call: it leaves no line in the ledger.
            entry = None if isinstance(failure, HumanTurnWanted) else scope.entry(status, error)
            if entry is not None:
                self.book.add(entry)
            scope.finish(entry, failure)
            self.emit(
                ev.AgentCompleted(
                    self.debate_id, speaker.id, speaker.name, activity, status == "ok", round_number, kind, target_id
                )
            )

    def _delta_hook(
        self, speaker: Speaker, round_number: int | None, kind: str | None, target_id: str | None
    ) -> Callable[[int, str], None]:
        def publish(offset: int, text: str) -> None:
            delta = ev.TokenDelta(self.debate_id, speaker.id, speaker.name, round_number, kind, target_id, offset, text)
            self.emit(delta)

        return publish

    def _watches_of(self, info: CallInfo) -> list[CallWatch]:
        """Each watcher's watch of this call; a watcher that fails is logged and left out."""
        watches: list[CallWatch] = []
        for watcher in self.watchers:
            try:
                watches.append(watcher.call_started(info))
            except Exception:
                log.exception("call watcher failed to start watching %s", info.label())
        return watches

    def flush_warnings(self, warnings: list[str]) -> None:
        for message in warnings:
            self.warn(message)
        warnings.clear()

    def clarifications_text(self) -> str:
        return format_clarifications(self.state.clarifications)

    def add_contribution(self, round_number: int, speaker: Speaker, contribution: Contribution) -> Contribution:
        self.record(ContributionRecorded(round_number=round_number, contribution=contribution))
        self.emit(ev.ContributionAdded(self.debate_id, round_number, speaker.name, contribution))
        return contribution

    async def cancel_work(self) -> None:
        if self.work is not None:
            await self.work.cancel()
            self.work.release()
            self.work = None


def contribution_from(
    speaker: Speaker,
    kind: ContributionType,
    completion: Completion,
    *,
    target_agent_id: str | None = None,
    tool_calls: tuple[ToolCallRecord, ...] | None = None,
) -> Contribution:
    metadata = metadata_from(completion)
    metadata.played_by = played_by(speaker, completion)
    return Contribution(
        agent_id=speaker.id,
        agent_role=speaker.role,
        type=kind,
        content=completion.text,
        target_agent_id=target_agent_id,
        metadata=metadata,
        tool_calls=list(tool_calls) if tool_calls is not None else None,
    )


def metadata_from(completion: Completion) -> ContributionMetadata:
    return ContributionMetadata(
        tokens_used=completion.usage.total_tokens,
        input_tokens=completion.usage.input_tokens,
        output_tokens=completion.usage.output_tokens,
        latency_ms=completion.latency_ms,
        model=completion.model,
        served_model=completion.served_model,
        usage_estimated=completion.usage.estimated,
        finish_reason=completion.finish_reason,
        truncated=completion.truncated,
        attempts=completion.attempts,
    )


def failed_contribution(
    speaker: Speaker, kind: ContributionType, error: Exception, *, target_agent_id: str | None, attempts: int
) -> Contribution:
    return Contribution(
        agent_id=speaker.id,
        agent_role=speaker.role,
        type=kind,
        content="",
        target_agent_id=target_agent_id,
        status="failed",
        error=str(error) or type(error).__name__,
        metadata=ContributionMetadata(model=speaker.config.model, attempts=attempts),
    )


def cancel_quietly(tasks: list[asyncio.Task[object]]) -> list[asyncio.Task[object]]:
    for task in tasks:
        if not task.done():
            task.cancel()
    return tasks
