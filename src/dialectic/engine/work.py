"""The debate's work as a dataflow graph: each contribution starts the moment its inputs exist.

The unit of scheduling is one piece of work and its inputs, across the whole debate, not a
phase or a round:

* proposal (round 1): no inputs; (round r > 1): the agent's refinement of round r − 1,
  carried over without a call;
* critique of agent *i* by agent *j* in round r: *i*'s proposal of round r and *j*'s own
  history for round r (its refinement of round r − 1, and its summary when one is due);
* refinement of agent *i* in round r: *i*'s proposal, every critique of *i* in round r
  settled, and *i*'s own history for round r;
* summary of agent *i* for round r: *i*'s history final, i.e. its refinement of round r − 1;
* the judge's evaluation of round r (``convergence``/``quality`` termination): every
  refinement of round r.

The graph's nodes (:mod:`dialectic.engine.nodes`) still move the persisted cursor one step at
a time and each waits for its part of this graph, so a reader sees the same map and a
resumed debate starts from the same place. Every task first looks in the state for its
saved result, so nothing saved is asked of a model again.

A round that may not happen (early stop by the judge's evaluation) is worked on ahead too,
but nothing of it is saved until the evaluation says the debate goes on; when it stops, the
work is cancelled and its cost recorded as discarded. When the consensus guard challenges a
round (:mod:`dialectic.engine.consensus_guard`), the work ahead never saw its objection: it is
cancelled the same way and started again.

An agent whose proposal or refinement keeps failing is dropped from the rest of the debate;
the debate goes on while at least ``debate.minAgents`` remain.

A call whose prompt outgrows the agent's context window is shrunk (:mod:`dialectic.engine.fitting`);
under ``debate.contextStrategy: summarize`` that may ask for the agent's summary for round *r* at
once, under its character threshold: one task, ``("window_summary", r, agent)``, shared by all the
calls of the agent that need it, saved as the round's summary once the round is sure to happen.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any, TypeVar

from dialectic.agents.participants import DebateAgent
from dialectic.agents.tool_loop import AgentReply
from dialectic.context.history import participant_names, perspective, rounds_text, summary_basis
from dialectic.core import events as ev
from dialectic.core.changes import (
    SummaryRecorded,
    WorkDiscarded,
)
from dialectic.core.config import DebateSettings
from dialectic.core.domain import (
    Contribution,
    ContributionMetadata,
    ContributionType,
    DebateSummary,
    DiscardedWork,
    RoundAssessment,
)
from dialectic.core.errors import ProviderError
from dialectic.engine.assessment import Decision, assess, assessed, decide
from dialectic.engine.attempts import with_second_chance
from dialectic.engine.dropping import active_agents, drop_agent
from dialectic.engine.files_access import with_tools_fallback
from dialectic.engine.fitting import Shapes, fitted
from dialectic.engine.memory import round_memories
from dialectic.engine.run_state import RunState, contribution_from, failed_contribution
from dialectic.engine.summaries import summarized, summary_from
from dialectic.engine.watchdog import wait_while_progressing
from dialectic.engine.window_shapes import History, history_shapes
from dialectic.llm.base import Completion

T = TypeVar("T")
Key = tuple[Any, ...]
"""``(kind, round, agent[, target])``, e.g. ``("critique", 2, "agent-kiss", "agent-architect")``."""


class Discarded(Exception):
    """Work for a round that will not happen: its result is thrown away, never saved."""


class DebateWork:
    """Every task of the debate, created on demand, each awaiting only its own inputs."""

    def __init__(self, ctx: RunState, *, clock: Callable[[], float] | None = None) -> None:
        self.ctx = ctx
        loop = asyncio.get_running_loop()
        self._clock = clock or loop.time
        self._tasks: dict[Key, asyncio.Task[Any]] = {}
        self._gates: dict[int, asyncio.Future[bool]] = {}
        self._fatal: asyncio.Future[None] = loop.create_future()
        self._in_call: set[Key] = set()
        self._discarded: dict[int, DiscardedWork] = {}
        self.last_progress = self._clock()

    # -- what nodes call ------------------------------------------------------------------------

    @property
    def settings(self) -> DebateSettings:
        return self.ctx.roster.settings

    def agents(self) -> list[DebateAgent]:
        """The agents still taking part."""
        return active_agents(self.ctx)

    def summary_keys(self, number: int) -> list[Key]:
        return [("summary", number, a.id) for a in self.agents()] if number > 1 else []

    def proposal_keys(self, number: int) -> list[Key]:
        return [("proposal", number, a.id) for a in self.agents()]

    def critique_keys(self, number: int) -> list[Key]:
        agents = self.agents()
        return [("critique", number, c.id, t.id) for c in agents for t in agents if c.id != t.id]

    def refinement_keys(self, number: int) -> list[Key]:
        return [("refinement", number, a.id) for a in self.agents()]

    def start_rounds(self, first: int) -> None:
        """Create the tasks of round ``first`` and every later round: each waits for its inputs."""
        for number in range(first, self.settings.rounds + 1):
            for key in (
                *self.summary_keys(number),
                *self.proposal_keys(number),
                *self.critique_keys(number),
                *self.refinement_keys(number),
            ):
                self.task(key)
            if self._evaluates(number):
                self.task(("evaluation", number))

    async def wait(self, keys: Sequence[Key]) -> list[Any]:
        """The results of ``keys`` (``None`` for work that was skipped).

        Raises the first fatal failure of any task of the debate, and ``DebateTimeoutError``
        when no work at all has finished for ``timeoutPerRound`` — a slow model that keeps
        producing is never cut off, a stalled one is.
        """
        tasks = [self.task(k) for k in keys]
        await wait_while_progressing(
            tasks,
            last_progress=lambda: self.ctx.stalled_since(self.last_progress, self._clock),
            clock=self._clock,
            limit_ms=self.settings.timeout_per_round,
            round_number=self.ctx.state.current_round,
            fatal=self._fatal,
        )
        self._raise_fatal()
        return [None if t.cancelled() else t.result() for t in tasks]

    async def evaluation(self, number: int) -> Decision:
        results = await self.wait([("evaluation", number)])
        decision: Decision = results[0]
        return decision

    async def discard_beyond(self, number: int) -> None:
        """Cancel the work of rounds after ``number`` and record what it cost."""
        doomed = [t for k, t in self._tasks.items() if _round_of(k) > number and not t.done()]
        for key in self._in_call:
            if _round_of(key) > number:
                self._discard_entry(_round_of(key)).cancelled_calls += 1
        for task in doomed:
            task.cancel()
        await asyncio.gather(*doomed, return_exceptions=True)
        self._record_discarded()

    async def restart_beyond(self, number: int) -> None:
        """Start the unsaved work of rounds after ``number`` again (what ran already is recorded as discarded).

        The consensus guard spoke after round ``number``: work of the next round that started ahead never
        saw its objection. Call once that round's gate is open (nothing awaits the gate any more).
        """
        doomed = {k: t for k, t in self._tasks.items() if _round_of(k) > number and not t.done()}
        for key in self._in_call:
            if key in doomed:
                self._discard_entry(_round_of(key)).cancelled_calls += 1
        for task in doomed.values():
            task.cancel()
        await asyncio.gather(*doomed.values(), return_exceptions=True)
        for key, task in doomed.items():
            if self._tasks.get(key) is task:
                del self._tasks[key]
        self._record_discarded()
        self.start_rounds(number + 1)

    def _record_discarded(self) -> None:
        for round_number in sorted(self._discarded):
            entry = self._discarded.pop(round_number)
            if entry.calls or entry.cancelled_calls:
                self.ctx.record(WorkDiscarded(discarded=entry))
                self.ctx.emit(ev.WorkAbandoned(self.ctx.debate_id, entry))

    async def cancel(self) -> None:
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if self._fatal.done() and not self._fatal.cancelled():
            self._fatal.exception()  # retrieved: it has been (or is being) reported by a waiter
        self._tasks.clear()

    # -- the task table ---------------------------------------------------------------------------

    def task(self, key: Key) -> asyncio.Task[Any]:
        existing = self._tasks.get(key)
        if existing is not None:
            return existing
        task = asyncio.ensure_future(self._guarded(key))
        self._tasks[key] = task
        return task

    def _body(self, key: Key) -> Coroutine[Any, Any, Any]:
        kind, number, agent = key[0], key[1], key[2:]
        roster = self.ctx.roster
        if kind == "proposal":
            return self._proposal(number, roster.agent(agent[0]))
        if kind == "critique":
            return self._critique(number, roster.agent(agent[0]), roster.agent(agent[1]))
        if kind == "refinement":
            return self._refinement(number, roster.agent(agent[0]))
        if kind == "summary":
            return self._summary(number, roster.agent(agent[0]))
        if kind == "window_summary":
            return self._summary(number, roster.agent(agent[0]), forced=True)
        if kind == "evaluation":
            return self._evaluation(number)
        raise ValueError(f"unknown work {key!r}")

    async def _guarded(self, key: Key) -> Any:
        """Run one task: a discarded result is ``None``; any other failure fails the whole debate.

        The body coroutine is made here, inside the task, so a task cancelled before it ran
        leaves no coroutine behind.
        """
        try:
            return await self._body(key)
        except Discarded:
            return None
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            if not self._fatal.done():
                self._fatal.set_exception(exc)
            raise
        finally:
            self.last_progress = self._clock()

    def _raise_fatal(self) -> None:
        if self._fatal.done():
            error = self._fatal.exception()
            if error is not None:
                raise error

    async def _input(self, key: Key) -> Any:
        """Another task's result; ``None`` when that work was skipped or cancelled (a dropped agent)."""
        task = self.task(key)
        await asyncio.wait({task})
        return None if task.cancelled() else task.result()

    # -- rounds that may not happen -------------------------------------------------------------

    def _evaluates(self, number: int) -> bool:
        """Whether round ``number`` is assessed (by the judge, the detectors or both)."""
        return assessed(self.settings)

    def _decides(self, number: int) -> bool:
        """Whether round ``number``'s assessment may end the debate, or the consensus guard may speak after it
        (``consensusGuard: on``), so the next round waits for it."""
        decisive = self.settings.termination().type != "fixed" or self.settings.consensus_guard == "on"
        return decisive and number < self.settings.rounds

    def _gate(self, number: int) -> asyncio.Future[bool]:
        """Resolves to whether round ``number`` happens (known at once unless an evaluation decides)."""
        gate = self._gates.get(number)
        if gate is None:
            gate = asyncio.get_running_loop().create_future()
            self._gates[number] = gate
            previous = self.ctx.state.find_round(number - 1)
            if number <= 1 or not self._decides(number - 1):
                gate.set_result(number <= self.settings.rounds)
            elif previous is not None and previous.guard is not None:
                gate.set_result(True)  # the consensus guard spoke after it: the debate goes on
            elif self.ctx.state.find_round(number) is not None:
                gate.set_result(True)  # work of that round was saved: it was decided before a crash
            elif previous is not None and previous.assessment is not None:
                if self.settings.consensus_guard == "off" or not self._stops(previous.assessment):
                    gate.set_result(not self._stops(previous.assessment))
                # else the guard may still speak (a crash came between the assessment and its turn): the
                # evaluation, run again, decides
        return gate

    async def _save_or_discard(self, number: int, completion: Completion | None) -> None:
        """Wait until round ``number`` is decided; throw the work away if the round will not happen.

        Work cancelled while it waits (started again after the consensus guard spoke, see
        :meth:`restart_beyond`) is thrown away too, and its call counted as discarded.
        """
        try:
            happens = await self._gate(number)
        except asyncio.CancelledError:
            self._count_discarded(number, completion)
            raise
        if happens:
            return
        self._count_discarded(number, completion)
        raise Discarded()

    def _count_discarded(self, number: int, completion: Completion | None) -> None:
        if completion is not None:
            entry = self._discard_entry(number)
            entry.calls += 1
            entry.input_tokens += completion.usage.input_tokens
            entry.output_tokens += completion.usage.output_tokens

    def _save_when_decided(self, number: int, save: Callable[[], object]) -> None:
        """Save now if round ``number`` is sure to happen; else when the judge decides it does (or never)."""
        gate = self._gate(number)
        if gate.done():
            if not gate.result():
                raise Discarded()
            save()
            return

        def on_decided(decided: asyncio.Future[bool]) -> None:
            if decided.cancelled() or not decided.result():
                return
            try:
                save()
            except Exception as exc:  # a store failure here must still fail the debate
                if not self._fatal.done():
                    self._fatal.set_exception(exc)

        gate.add_done_callback(on_decided)

    def _discard_entry(self, number: int) -> DiscardedWork:
        return self._discarded.setdefault(number, DiscardedWork(round_number=number))

    def _stops(self, assessment: RoundAssessment) -> bool:
        stop, _ = decide(self.settings.termination(), assessment, format_name=self.settings.format, may_stop=True)
        return stop

    async def _call(self, key: Key, speaker: Any, activity: str, call: Awaitable[T]) -> T:
        """One LLM call, announced, and known to be in flight while it runs."""
        self._in_call.add(key)
        try:
            target = key[3] if len(key) > 3 else None
            return await self.ctx.announce(speaker, activity, call, round_number=key[1], kind=key[0], target_id=target)
        finally:
            self._in_call.discard(key)

    # -- who is still in -------------------------------------------------------------------------

    def _out(self, *agents: DebateAgent) -> bool:
        dropped = self.ctx.state.dropped_ids()
        return any(a.id in dropped for a in agents)

    def _drop(self, agent: DebateAgent, number: int, kind: Any, error: ProviderError, key: Key) -> None:
        """Take ``agent`` out (see :mod:`dialectic.engine.dropping`) and cancel its pending work."""
        drop_agent(self.ctx, agent, number, kind, error)
        for other_key, task in self._tasks.items():
            if other_key != key and agent.id in other_key[2:] and not task.done():
                task.cancel()

    # -- the kinds of work ------------------------------------------------------------------------

    def _saved(self, number: int, kind: str, agent_id: str, target_id: str | None = None) -> Contribution | None:
        rnd = self.ctx.state.find_round(number)
        return rnd.find(kind, agent_id, target_id) if rnd is not None else None  # type: ignore[arg-type]

    async def _history_ready(self, number: int, agent: DebateAgent) -> None:
        """Wait until ``agent``'s own history for round ``number`` is final (and summarized if due)."""
        if number > 1:
            await self._input(("refinement", number - 1, agent.id))
            await self._input(("summary", number, agent.id))

    def _history(self, number: int, agent: DebateAgent) -> Shapes[History]:
        """``agent``'s history in round ``number``, in the shapes that may fit its window.

        See :mod:`dialectic.engine.fitting`; its summary for the window is one task per agent and
        round, however many of its calls need it.
        """

        async def summarize() -> str | None:
            summary = await self._input(("window_summary", number, agent.id))
            return summary.summary if summary is not None else None

        return history_shapes(
            self.ctx.state,
            agent.id,
            number,
            strategy=self.settings.context_strategy,
            full_history=self.settings.include_full_history,
            summarize=summarize if agent.summarization.enabled and number > 1 else None,
        )

    def _summarized_before(self, number: int, agent: DebateAgent) -> bool:
        """Whether ``agent`` summarized its history in an earlier round: that summary is out of date now."""
        return any(agent.id in r.summaries for r in self.ctx.state.rounds if r.round_number < number)

    async def _proposal(self, number: int, agent: DebateAgent) -> Contribution | None:
        ctx = self.ctx
        saved = self._saved(number, "proposal", agent.id)
        if saved is not None and saved.ok:
            return saved
        if self._out(agent):
            return None
        if number > 1:
            previous = await self._input(("refinement", number - 1, agent.id))
            if self._out(agent):
                return None
            if previous is not None and previous.ok:
                carried = Contribution(
                    agent_id=agent.id,
                    agent_role=agent.role,
                    type="proposal",
                    content=previous.content,
                    metadata=ContributionMetadata(
                        model=previous.metadata.model, truncated=previous.metadata.truncated, carried_over=True
                    ),
                )
                # No call: critiques of it may start at once, even ahead of the judge's decision.
                self._save_when_decided(number, lambda: ctx.add_contribution(number, agent, carried))
                return carried
            ctx.warn(f"{agent.name} has no refinement from round {number - 1}; asking for a new proposal")
            await self._history_ready(number, agent)
        return await self._own_contribution(
            number,
            agent,
            "proposal",
            "proposing",
            lambda: fitted(
                ctx,
                agent,
                "proposing",
                self._history(number, agent),
                lambda history: agent.propose(
                    problem=ctx.problem_for(agent),
                    context="",
                    clarifications=ctx.clarifications_text(),
                    history=history.text,
                    history_is_summary=history.is_summary,
                    memories=round_memories(ctx.state, number),
                    tools=ctx.files.tools_for(agent),
                    on_retry=ctx.retry_hook(agent, "proposing"),
                ),
            ),
        )

    async def _own_contribution(
        self,
        number: int,
        agent: DebateAgent,
        kind: ContributionType,
        activity: str,
        make_call: Callable[[], Awaitable[AgentReply]],
    ) -> Contribution | None:
        """An agent's proposal or refinement: asked for (with a second chance), saved once its round is
        sure to happen — or, when it keeps failing, recorded as failed and the agent dropped."""
        key: Key = (kind, number, agent.id)
        ctx = self.ctx
        try:
            reply = await with_tools_fallback(
                ctx.files,
                agent,
                ctx.warn,
                lambda: with_second_chance(lambda: self._call(key, agent, activity, make_call())),
            )
        except ProviderError as exc:
            await self._save_or_discard(number, None)
            self._drop(agent, number, kind, exc, key)
            return None
        await self._save_or_discard(number, reply.completion)
        contribution = contribution_from(agent, kind, reply.completion, tool_calls=reply.tool_calls)
        return ctx.add_contribution(number, agent, contribution)

    async def _critique(self, number: int, critic: DebateAgent, target: DebateAgent) -> Contribution | None:
        ctx = self.ctx
        saved = self._saved(number, "critique", critic.id, target.id)
        if saved is not None:
            return saved
        proposal = await self._input(("proposal", number, target.id))
        await self._history_ready(number, critic)
        if proposal is None or not proposal.ok or self._out(critic, target):
            return None
        activity = f"critiquing {target.name}"
        key: Key = ("critique", number, critic.id, target.id)
        try:
            completion = await with_second_chance(
                lambda: self._call(
                    key,
                    critic,
                    activity,
                    fitted(
                        ctx,
                        critic,
                        activity,
                        self._history(number, critic),
                        lambda history: critic.critique(
                            problem=ctx.problem_for(critic),
                            clarifications=ctx.clarifications_text(),
                            history=history.text,
                            history_is_summary=history.is_summary,
                            target=target,
                            proposal=proposal,
                            on_retry=ctx.retry_hook(critic, activity),
                        ),
                    ),
                )
            )
        except ProviderError as exc:
            # A critique that cannot be had is recorded as failed; its author stays in the debate.
            await self._save_or_discard(number, None)
            failed = failed_contribution(critic, "critique", exc, target_agent_id=target.id, attempts=_attempts(exc))
            return ctx.add_contribution(number, critic, failed)
        await self._save_or_discard(number, completion)
        contribution = contribution_from(critic, "critique", completion, target_agent_id=target.id)
        return ctx.add_contribution(number, critic, contribution)

    async def _refinement(self, number: int, agent: DebateAgent) -> Contribution | None:
        ctx = self.ctx
        saved = self._saved(number, "refinement", agent.id)
        if saved is not None and saved.ok:
            return saved
        original = await self._input(("proposal", number, agent.id))
        critics = [a for a in ctx.roster.agents if a.id != agent.id]
        received = [await self._input(("critique", number, c.id, agent.id)) for c in critics]
        await self._history_ready(number, agent)
        if original is None or not original.ok or self._out(agent):
            return None
        critiques = [
            {"author_name": ctx.roster.agent(c.agent_id).name, "author_role": c.agent_role, "content": c.content}
            for c in received
            if c is not None and c.ok
        ]
        return await self._own_contribution(
            number,
            agent,
            "refinement",
            "refining",
            lambda: fitted(
                ctx,
                agent,
                "refining",
                self._history(number, agent),
                lambda history: agent.refine(
                    problem=ctx.problem_for(agent),
                    clarifications=ctx.clarifications_text(),
                    history=history.text,
                    history_is_summary=history.is_summary,
                    original=original,
                    critiques=critiques,
                    tools=ctx.files.tools_for(agent),
                    on_retry=ctx.retry_hook(agent, "refining"),
                ),
            ),
        )

    async def _summary(self, number: int, agent: DebateAgent, *, forced: bool = False) -> DebateSummary | None:
        """``agent``'s summary of its own history before round ``number``, when that history is long.

        It is also due when ``agent`` summarized an earlier round (that summary is out of date), and,
        ``forced``, when its prompt outgrew its context window (``debate.contextStrategy: summarize``).
        A forced summary is asked for while a call of the agent waits for it, so it never waits for
        its round to be decided: it is saved once the round is sure to happen, and never if it does not.
        """
        ctx = self.ctx
        rnd = ctx.state.find_round(number)
        if rnd is not None and agent.id in rnd.summaries:
            return rnd.summaries[agent.id]
        if not agent.summarization.enabled or self._out(agent):
            return None
        await self._input(("refinement", number - 1, agent.id))
        views = perspective(ctx.state, agent.id, number)
        names = participant_names(ctx.state)
        history = rounds_text(views, names)
        due = forced or len(history) >= agent.summarization.threshold or self._summarized_before(number, agent)
        if self._out(agent) or not history or not due:
            return None
        # Incremental: an earlier summary (of the rounds before its own) plus the rounds since it.
        basis = summary_basis(ctx.state, agent.id, number - 1)
        previous, fresh = (
            ("", views) if basis is None else (basis[1].summary, [v for v in views if v.round_number >= basis[0]])
        )
        warnings: list[str] = []
        try:
            completion = await self._call(
                ("summary", number, agent.id),
                agent,
                "summarizing",
                summarized(ctx, agent, fresh, previous, warnings),
            )
        except ProviderError as exc:
            if not forced:
                await self._save_or_discard(number, None)
            ctx.flush_warnings(warnings)
            ctx.warn(f"{agent.name} could not summarize its history ({exc}); it keeps the full history")
            return None
        summary = summary_from(agent, agent.summarization, completion, before_chars=len(history))
        ctx.flush_warnings(warnings)
        if forced:
            self._save_when_decided(number, lambda: self._keep_summary(number, agent, summary))
        else:
            await self._save_or_discard(number, completion)
            self._keep_summary(number, agent, summary)
        return summary

    def _keep_summary(self, number: int, agent: DebateAgent, summary: DebateSummary) -> None:
        self.ctx.record(SummaryRecorded(round_number=number, summary=summary))
        self.ctx.emit(ev.SummaryAdded(self.ctx.debate_id, number, agent.name, summary))

    async def _evaluation(self, number: int) -> Decision:
        """Round ``number``'s assessment once its refinements are in; it decides whether the next round happens."""
        if self._decides(number):
            gate = self._gate(number + 1)
        await self.wait(self.refinement_keys(number))
        if number > 1 and self._evaluates(number - 1):
            # the judge is shown its assessment of the previous round: wait for it even when the round
            # went on without it (a fixed number of rounds), or the prompt depends on which ends first
            await self.wait([("evaluation", number - 1)])
        decision = await assess(self.ctx, number, may_stop=self._decides(number))
        if self._decides(number) and not gate.done():
            gate.set_result(not decision.stop)
        if decision.challenged:
            await self.restart_beyond(number)
        return decision


def _round_of(key: Key) -> int:
    number: int = key[1]
    return number


def _attempts(error: ProviderError) -> int:
    return int(getattr(error, "attempts", 1))
