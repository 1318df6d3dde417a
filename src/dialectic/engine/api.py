"""The engine's front door: start a debate, or resume one from what was saved."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from dialectic.context.files import check_directory
from dialectic.core import events as ev
from dialectic.core.changes import (
    AnswersRecorded,
    BudgetChanged,
    DebateCreated,
    ParticipantsReinstated,
    StatusChanged,
    TeamSelected,
    TurnAnswered,
    WindowsSized,
)
from dialectic.core.config import MIN_CONTEXT_WINDOW, SystemConfig, resolved_format, too_few_rounds
from dialectic.core.domain import CONFIG_DIR_KEY, DebateState, new_debate_id, new_trace_id
from dialectic.core.errors import ConfigError, DebateStateError, InvalidArgumentsError, StoreError
from dialectic.core.events import EventBus
from dialectic.core.ledger import debate_totals
from dialectic.core.pricing import PriceTable
from dialectic.core.receipts import ReceiptSigner
from dialectic.engine.budget import BudgetGuard, check_budget_prices, with_limits
from dialectic.engine.calls import CallWatcher
from dialectic.engine.files_access import (
    FilesAccess,
    context_root,
    gathered_paste,
    open_files_access,
    resolved_mode,
    with_resolved_context,
)
from dialectic.engine.lease import HeldLease, LeaseHold, LeasePolicy
from dialectic.engine.pausing import RunControl
from dialectic.engine.personas_step import apply_stances
from dialectic.engine.problem_kind import choose_kind
from dialectic.engine.protocols import protocol
from dialectic.engine.roster import Roster, build_roster, reply_cache
from dialectic.engine.run_state import RunState
from dialectic.engine.runner import node_named, run_graph
from dialectic.engine.seats import TurnChannel
from dialectic.engine.team_step import choose_team, team_notice
from dialectic.engine.windows import WindowBook
from dialectic.llm.registry import ProviderPool
from dialectic.llm.retry import RetryPolicy
from dialectic.store.base import DebateStore, WindowMemory

"""Saved with the debate's configuration so a resumed debate reads the same prompt files."""

RESUMABLE = ("suspended", "paused", "interrupted", "failed", "running", "pending")


@dataclass(frozen=True)
class DebateRequest:
    problem: str
    config: SystemConfig
    """Fully resolved: CLI overrides applied, agents filtered."""
    config_dir: Path
    """Prompt paths in the configuration resolve relative to this directory."""
    pasted_files: str | None = None
    """The context directory's files as text to paste into the prompts (else gathered here in paste mode)."""
    clarify: bool = False
    replay_of: str | None = None
    """The debate this one replays (``dialectic replay``: the config should read the call cache)."""
    seed: str | None = None
    """The seed of the debate's shuffled orders (the replayed debate's, so its requests repeat); ``None``: its id."""


@dataclass(frozen=True)
class BudgetChange:
    """New limits for a resumed debate (``None`` keeps a limit as saved)."""

    max_cost_usd: float | None = None
    max_tokens: int | None = None


class DebateEngine:
    def __init__(
        self,
        store: DebateStore,
        providers: ProviderPool,
        bus: EventBus | None = None,
        *,
        retry: RetryPolicy | None = None,
        lease: LeasePolicy | None = None,
        watchers: Sequence[CallWatcher] = (),
        turns: TurnChannel | None = None,
        signer: ReceiptSigner | None = None,
    ) -> None:
        self.store = store
        self.providers = providers
        self.bus = bus or EventBus()
        self.retry = retry
        """``None``: each debate retries as its ``debate.retry`` configuration says."""
        self.lease = lease or LeasePolicy()
        self.watchers = list(watchers)
        """Told of every call each debate makes (a tracer); the bus carries everything else."""
        self.turns = turns
        """How a human seat's person is asked while a debate runs; ``None``: each human turn suspends the
        debate until its text is sent (``resume(..., turns=...)``). See :mod:`dialectic.engine.seats`."""
        self.signer = signer
        """Signs each completed debate's receipt (:mod:`dialectic.core.receipts`); ``None``: unsigned receipts."""

    async def start(self, request: DebateRequest, *, control: RunControl | None = None) -> DebateState:
        """Create the debate and run it until it completes, suspends, pauses (through ``control``) or fails."""
        config = request.config
        team = None
        if config.debate.team is not None:
            config, team = choose_team(config, self.store)
        short = too_few_rounds(config.debate)
        if short is not None:
            raise ConfigError(f"debate.rounds: {short}")
        if request.clarify and not config.debate.interactive_clarifications:
            config = config.model_copy(
                update={"debate": config.debate.model_copy(update={"interactive_clarifications": True})}
            )
        kind = choose_kind(config.debate.problem_kind, request.problem)
        # The kind is resolved once and saved with the debate: a resumed debate keeps its prompts.
        chosen = resolved_format(config.debate.format, kind.kind)
        config = config.model_copy(
            update={"debate": config.debate.model_copy(update={"problem_kind": kind.kind, "format": chosen})}
        )
        config_dir = request.config_dir.resolve()
        check_budget_prices(config, PriceTable.of(config.pricing))
        roster = build_roster(config, config_dir, self.providers, self.retry, reply_cache(self.store, config.debate))
        root = context_root(config.debate.context, config_dir)
        mode = resolved_mode(config.debate.context, roster) if root is not None else "off"
        config = with_resolved_context(config, root, mode)
        pasted = request.pasted_files
        if root is not None and mode == "paste" and pasted is None:
            pasted = gathered_paste(check_directory(root), roster.warnings)
        snapshot = config.to_json_dict()
        snapshot[CONFIG_DIR_KEY] = str(config_dir)
        files = await self._open_files(config, root, mode, roster)
        try:
            state = DebateState(
                id=self._fresh_id(),
                problem=request.problem,
                context=pasted or None,
                status="running",
                prompt_sources=roster.prompt_sources,
                agents=[a.participant() for a in roster.agents],
                judge=roster.judge.participant(),
                config=snapshot,
                trace_id=new_trace_id(),
                replay_of=request.replay_of,
                seed=request.seed,
            )
            control = control or RunControl()
            async with LeaseHold(self.store, state.id, self.lease, create=DebateCreated(state=state)) as lease:
                control.attach(state.id)
                ctx = self._context(lease.store.load(state.id), lease.store, roster, config, control, files)
                if team is not None:
                    ctx.record(TeamSelected(choice=team))
                self._announce(ctx, resumed=False)
                if team is not None:
                    ctx.emit(ev.Notice(ctx.debate_id, team_notice(team)))
                ctx.emit(
                    ev.Notice(
                        ctx.debate_id,
                        f"problem kind: {kind.kind} ({kind.reason}); set debate.problemKind to change it",
                    )
                )
                return await run_graph(ctx, node_named(None))
        finally:
            files.close()

    @staticmethod
    async def _open_files(config: SystemConfig, root: Path | None, mode: str, roster: Roster) -> FilesAccess:
        """The context directory opened for ``tools`` mode (its warnings go with the roster's)."""
        if root is None or mode != "tools":
            return FilesAccess(mode=mode)
        files = await open_files_access(config.debate.context, root, mode, roster)
        roster.warnings.extend(files.warnings)
        return files

    def _fresh_id(self) -> str:
        """A new debate id not yet in the store (ids carry the second they were made and 16 random bits)."""
        for _ in range(100):
            candidate = new_debate_id()
            if not self.store.exists(candidate):
                return candidate
        raise StoreError(f"could not find an unused debate id in {self.store.location}")

    async def resume(
        self,
        debate_id: str,
        answers: Mapping[str, str] | None = None,
        *,
        control: RunControl | None = None,
        budget: BudgetChange | None = None,
        windows: Mapping[str, int] | None = None,
        turns: Mapping[str, str] | None = None,
    ) -> DebateState:
        """Continue a saved debate; :class:`~dialectic.core.errors.DebateBusyError` if another run holds it.

        ``budget`` sets new limits first (saved with the debate), e.g. to go on past the old ones;
        ``windows`` (participant id → tokens) sets participants' context windows the same way, e.g.
        after a debate stopped because a prompt outgrew one (``debate.contextStrategy: fail``).
        ``turns`` (turn key → text) are the texts of human turns the debate waits for (see
        :class:`~dialectic.core.domain.HumanTurn`).
        """
        control = control or RunControl()
        async with LeaseHold(self.store, debate_id, self.lease) as lease:
            control.attach(debate_id)
            return await self._resume(lease, debate_id, answers, control, budget, windows or {}, turns or {})

    async def _resume(
        self,
        lease: HeldLease,
        debate_id: str,
        answers: Mapping[str, str] | None,
        control: RunControl,
        budget: BudgetChange | None,
        windows: Mapping[str, int],
        turns: Mapping[str, str],
    ) -> DebateState:
        state = lease.store.load(debate_id)
        if state.status == "completed":
            raise DebateStateError(f"debate {debate_id} is already completed; nothing to resume")
        if state.status not in RESUMABLE:
            raise DebateStateError(f"debate {debate_id} has status '{state.status}' and cannot be resumed")
        config = state.config_or_defaults()
        if windows:
            sized = WindowsSized(windows=checked_windows(config, windows))
            lease.store.append(debate_id, sized)
            state = lease.store.load(debate_id)
            config = state.config_or_defaults()
        if budget is not None and (budget.max_cost_usd is not None or budget.max_tokens is not None):
            changed = BudgetChanged(max_cost_usd=budget.max_cost_usd, max_tokens=budget.max_tokens)
            limited = with_limits(config, budget.max_cost_usd, budget.max_tokens)
            check_budget_prices(limited, PriceTable.of(config.pricing))
            lease.store.append(debate_id, changed)
            state = lease.store.load(debate_id)
            config = state.config_or_defaults()
        if config.debate.format == "auto":  # saved unresolved (not by start): resolve it as start does
            kind = choose_kind(config.debate.problem_kind, state.problem).kind
            settings = config.debate.model_copy(update={"format": resolved_format("auto", kind)})
            config = config.model_copy(update={"debate": settings})
        config_dir = state.config_dir()
        roster = build_roster(config, config_dir, self.providers, self.retry, reply_cache(self.store, config.debate))
        root = context_root(config.debate.context, config_dir)
        files = await self._open_files(config, root, config.debate.context.mode or "off", roster)
        try:
            return await self._run_resumed(lease, state, roster, config, control, files, answers, turns)
        finally:
            files.close()

    async def _run_resumed(
        self,
        lease: HeldLease,
        state: DebateState,
        roster: Roster,
        config: SystemConfig,
        control: RunControl,
        files: FilesAccess,
        answers: Mapping[str, str] | None,
        turns: Mapping[str, str],
    ) -> DebateState:
        ctx = self._context(state, lease.store, roster, config, control, files)
        apply_stances(roster, state)  # positions and personas the judge assigned before are kept
        self._announce(ctx, resumed=True)
        ctx.flush_warnings(lease.notices)
        ctx.flush_warnings(roster.warnings)
        self._record_answers(ctx, answers or {})
        self._record_turns(ctx, turns)
        changes: list[ParticipantsReinstated | StatusChanged] = []
        if state.status == "failed" and state.dropped:
            # Resuming a failed debate retries what failed: the agents dropped get another chance.
            names = ", ".join(roster.agent(d.agent_id).name for d in state.dropped)
            ctx.warn(f"giving the dropped agents another chance: {names}")
            changes.append(ParticipantsReinstated(agent_ids=[d.agent_id for d in state.dropped]))
        ctx.record(*changes, StatusChanged(status="running"))
        return await run_graph(ctx, node_named(state.next_node))

    def _context(
        self,
        state: DebateState,
        store: DebateStore,
        roster: Roster,
        config: SystemConfig,
        control: RunControl,
        files: FilesAccess,
    ) -> RunState:
        """The run's context: the saved state, and the budget counting from what the debate spent before."""
        prices = PriceTable.of(config.pricing)
        return RunState(
            state=state,
            store=store,
            bus=self.bus,
            roster=roster,
            control=control,
            prices=prices,
            guard=BudgetGuard(config.debate.budget, prices, debate_totals(state)),
            watchers=list(self.watchers),
            files=files,
            windows=WindowBook(
                memory=store if isinstance(store, WindowMemory) else None,
                endpoints=roster.endpoints,
                saved=state.windows,
            ),
            turns=self.turns,
            signer=self.signer,
        )

    def _announce(self, ctx: RunState, *, resumed: bool) -> None:
        roster: Roster = ctx.roster
        rounds = 1 if protocol(roster.settings.format).one_round else roster.settings.rounds
        ctx.emit(
            ev.DebateStarted(
                ctx.debate_id,
                ctx.state.problem,
                rounds,
                tuple(ctx.state.agents),
                roster.judge.participant(),
                resumed=resumed,
                format=roster.settings.format,
                trace_id=ctx.state.trace_id,
            )
        )

    def _record_answers(self, ctx: RunState, answers: Mapping[str, str]) -> None:
        if not answers:
            return
        pending = {item.id for item in ctx.state.pending_questions()}
        usable = {qid: (text.strip() or "NA") for qid, text in answers.items() if qid in pending}
        unknown = sorted(set(answers) - pending)
        if unknown:
            ctx.warn(f"ignoring answers to unknown or already answered questions: {', '.join(unknown)}")
        if usable:
            ctx.record(AnswersRecorded(answers=usable))

    def _record_turns(self, ctx: RunState, turns: Mapping[str, str]) -> None:
        if not turns:
            return
        pending = {turn.key for turn in ctx.state.pending_turns()}
        unknown = sorted(set(turns) - pending)
        if unknown:
            ctx.warn(f"ignoring texts for unknown or already played human turns: {', '.join(unknown)}")
        blank = sorted(key for key, text in turns.items() if key in pending and not text.strip())
        if blank:
            ctx.warn(f"ignoring empty texts for human turns: {', '.join(blank)}")
        written = [
            TurnAnswered(key=key, text=text.strip()) for key, text in turns.items() if key in pending and text.strip()
        ]
        if written:
            ctx.record(*written)


def checked_windows(config: SystemConfig, windows: Mapping[str, int]) -> dict[str, int]:
    """``windows`` for the participants of ``config`` (``*`` stands for every one of them, agents and judge),
    each at least :data:`~dialectic.core.config.MIN_CONTEXT_WINDOW` tokens; ``InvalidArgumentsError`` says
    what is wrong."""
    participants = {a.id: a for a in [*config.agents, config.judge]}
    sized: dict[str, int] = {}
    for key, tokens in windows.items():
        if tokens < MIN_CONTEXT_WINDOW:
            raise InvalidArgumentsError(
                f"--context-window: {tokens} is too small (at least {MIN_CONTEXT_WINDOW} tokens)"
            )
        if key == "*":
            sized.update(dict.fromkeys(participants, tokens))
        elif key in participants:
            sized[key] = tokens
        else:
            known = ", ".join(participants)
            raise InvalidArgumentsError(f"--context-window: no participant '{key}' in this debate (it has: {known})")
    for key, tokens in sized.items():
        reply = participants[key].max_tokens
        if reply is not None and reply >= tokens:
            raise InvalidArgumentsError(
                f"--context-window: {key}'s window of {tokens} tokens leaves no room for its maxTokens ({reply})"
            )
    return sized
