"""``Debate``: run, stream, resume and read debates from a Python program.

One object holds what a debate runs with (a configuration, from a file or built here) and where
debates are kept (the store the CLI uses, unless told otherwise). ``run`` and ``run_sync`` give
a :class:`~dialectic.front.results.DebateResult`; ``stream`` yields the engine's typed events as
they happen (token deltas included) and ends with :class:`~dialectic.front.results.Finished`.
Configurations go through the same front door as ``dialectic debate``
(:func:`dialectic.loading.setup.prepare_config`): a provider is chosen as the CLI chooses it
when nothing names one, and everything is checked before a debate is created.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from dialectic.core.config import AgentConfig, FallbackModel, SystemConfig, problem_text
from dialectic.core.domain import DebateState
from dialectic.core.errors import InvalidArgumentsError
from dialectic.core.events import DebateStarted, Event, EventBus
from dialectic.engine.api import DebateEngine, DebateRequest
from dialectic.engine.seats import TurnChannel, turn_texts
from dialectic.front.results import DebateResult, Finished
from dialectic.llm.registry import ProviderPool, default_model_for
from dialectic.loading.config import ARGUMENT_NAMES, apply_overrides
from dialectic.loading.setup import Overrides, check_ready, prepare_config
from dialectic.store import MEMORY_LOCATION, DebateListing, DebateStore, MemoryStore, open_store

T = TypeVar("T")
StoreChoice = DebateStore | str | Path | None
"""A store, or where one is: ``None`` for the CLI's (``$DIALECTIC_HOME`` or the user's data directory),
a directory or database path, or ``":memory:"``."""


@dataclass(frozen=True)
class Agent:
    """A participant to build a configuration from: a role, and whatever differs from the defaults."""

    role: str
    name: str | None = None
    provider: str | None = None
    """``None``: the provider the configuration's first agent uses (chosen as the CLI chooses it)."""
    model: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    base_url: str | None = None
    id: str | None = None
    deadline: int | None = None
    """A human seat's (``provider="human"``) time for each turn, in milliseconds; then ``fallback`` plays it."""
    fallback: FallbackModel | Mapping[str, Any] | str | None = None
    """A human seat's: the model that plays its turn when its deadline passes (``{"provider": .., "model": ..}``).
    The judge's: the agent (its id, ``"auto"`` or ``"off"``) that writes the synthesis when the judge fails."""

    def config(self, template: AgentConfig, taken: set[str]) -> AgentConfig:
        """This agent as a configuration entry, filling what it leaves out from ``template``."""
        role = self.role.strip().lower()
        values: dict[str, Any] = {
            "id": self.id or _fresh_id(f"agent-{role}", taken),
            "name": self.name or role.replace("-", " ").title(),
            "role": role,
            "provider": self.provider or template.provider,
            "model": self.model or (default_model_for(self.provider) if self.provider else template.model),
            "temperature": self.temperature if self.temperature is not None else template.temperature,
            "max_tokens": self.max_tokens if self.max_tokens is not None else template.max_tokens,
            "base_url": self.base_url or (template.base_url if not self.provider else None),
            "deadline": self.deadline,
            "fallback": self.fallback,
        }
        return AgentConfig.model_validate({k: v for k, v in values.items() if v is not None})


@dataclass(frozen=True)
class Judge(Agent):
    """The participant that synthesizes, scores and names a winner."""

    role: str = "generalist"


def _fresh_id(wanted: str, taken: set[str]) -> str:
    chosen, number = wanted, 1
    while chosen in taken:
        number += 1
        chosen = f"{wanted}-{number}"
    taken.add(chosen)
    return chosen


def load_config(path: str | Path | None = None, **overrides: Any) -> SystemConfig:
    """The configuration in ``path`` (else ``./debate-config.json``, else the defaults with a provider chosen
    as the CLI chooses it), with ``overrides`` (``rounds``, ``roles``, ``provider``, ``model``,
    ``debate_format``, ``budget_usd``, …: the fields of :class:`~dialectic.loading.setup.Overrides`), checked."""
    wanted = Overrides(**{"names": ARGUMENT_NAMES, **overrides})
    return prepare_config(Path(path) if path is not None else None, wanted).config


class Debate:
    """Debates on one configuration, kept in one store.

    >>> from dialectic import Debate, Agent
    >>> debate = Debate(agents=[Agent("architect"), Agent("security")], provider="scripted", rounds=1,
    ...                 store=":memory:")
    >>> result = debate.run_sync("Design a rate limiter")
    >>> result.status
    'completed'
    """

    def __init__(
        self,
        config: SystemConfig | None = None,
        *,
        agents: Sequence[Agent | AgentConfig] | None = None,
        judge: Agent | AgentConfig | None = None,
        provider: str | None = None,
        model: str | None = None,
        rounds: int | None = None,
        format: str | None = None,
        max_answers: int | None = None,
        config_dir: str | Path = ".",
        store: StoreChoice = None,
        providers: ProviderPool | None = None,
        turns: TurnChannel | None = None,
    ) -> None:
        """Without ``config``, the defaults (a provider chosen as the CLI chooses it unless ``provider`` is
        given), with ``agents``, ``judge``, ``rounds``, ``format`` and ``max_answers`` (the adaptive
        protocol's most blind answers, ``debate.answers.maxAnswers``) laid over it. ``providers`` lets a
        program share (or stand in for) the provider clients. ``turns`` asks the person in a human seat
        (``provider="human"``) for each turn while the debate runs; without it, a human turn suspends the
        debate until :meth:`submit_turn` sends the text."""
        directory = Path(config_dir)
        if config is None:
            overrides = Overrides(
                provider=provider,
                model=model,
                rounds=rounds,
                debate_format=format,
                max_answers=max_answers,
                names=ARGUMENT_NAMES,
            )
            prepared = prepare_config(None, overrides, check=False)
            config, directory = prepared.config, Path(config_dir) if config_dir != "." else prepared.directory
        elif any(given is not None for given in (provider, model, rounds, format, max_answers)):
            config = load_config_over(
                config, provider=provider, model=model, rounds=rounds, debate_format=format, max_answers=max_answers
            )
        if agents is not None or judge is not None:
            config = _with_participants(config, agents, judge)
        check_ready(config, directory)
        self.config = config
        self.config_dir = directory
        self._store_choice = store
        self._memory = MemoryStore() if store == MEMORY_LOCATION else None
        self._providers = providers
        self._turns = turns

    @classmethod
    def from_config(cls, path: str | Path, *, store: StoreChoice = None, **overrides: Any) -> Debate:
        """Debates on the configuration file ``path`` (JSON, YAML or TOML), with ``overrides`` as
        :func:`load_config` takes them."""
        prepared = prepare_config(Path(path), Overrides(**overrides))
        return cls(prepared.config, config_dir=prepared.directory, store=store)

    async def run(self, problem: str, *, clarify: bool = False) -> DebateResult:
        """Run a debate on ``problem`` until it completes (or, with ``clarify``, stops for answers:
        then ``status`` is ``suspended`` and :meth:`resume` takes the answers). A failure raises the
        error the CLI would report (the debate is saved and can be resumed)."""
        return await self._with_engine(lambda engine: engine.start(self._request(problem, clarify)))

    def run_sync(self, problem: str, *, clarify: bool = False) -> DebateResult:
        """:meth:`run`, for code that is not async."""
        return _run_sync(self.run(problem, clarify=clarify))

    async def stream(self, problem: str, *, clarify: bool = False, deltas: bool = True) -> AsyncIterator[Event]:
        """The debate's events as they happen (token deltas included unless ``deltas=False``), then
        :class:`Finished` with the result."""
        async for event in self._streamed(lambda engine: engine.start(self._request(problem, clarify)), deltas):
            yield event

    async def resume(
        self, debate_id: str, answers: Mapping[str, str] | None = None, *, turns: Mapping[str, str] | None = None
    ) -> DebateResult:
        """Go on with a saved debate: a suspended one with ``answers`` (question id → answer) or ``turns``
        (human turn key → text), or one that was interrupted or failed, from where it stopped."""
        return await self._with_engine(lambda engine: engine.resume(debate_id, answers, turns=turns))

    async def stream_resume(
        self, debate_id: str, answers: Mapping[str, str] | None = None, *, turns: Mapping[str, str] | None = None
    ) -> AsyncIterator[Event]:
        """:meth:`resume`, yielding the run's events as :meth:`stream` does, then :class:`Finished`."""
        async for event in self._streamed(lambda engine: engine.resume(debate_id, answers, turns=turns)):
            yield event

    def resume_sync(
        self, debate_id: str, answers: Mapping[str, str] | None = None, *, turns: Mapping[str, str] | None = None
    ) -> DebateResult:
        return _run_sync(self.resume(debate_id, answers, turns=turns))

    async def submit_turn(self, debate_id: str, text: str, *, key: str | None = None) -> DebateResult:
        """Write a human seat's turn and go on with the debate that waits for it.

        ``key`` is the turn's (:attr:`DebateResult.turns`), or its seat's id; without it, the turn
        waiting first. A debate that waits for no human turn, an unknown key or an empty text raise
        the error ``dialectic resume --turn-file`` reports."""
        with self._store() as store:
            chosen = turn_texts(store.load(debate_id), [(key, text)])
        return await self.resume(debate_id, turns=chosen)

    def submit_turn_sync(self, debate_id: str, text: str, *, key: str | None = None) -> DebateResult:
        """:meth:`submit_turn`, for code that is not async."""
        return _run_sync(self.submit_turn(debate_id, text, key=key))

    def load(self, debate_id: str) -> DebateResult:
        """A saved debate (``DebateNotFoundError`` if there is none)."""
        with self._store() as store:
            return DebateResult(store.load(debate_id))

    def list(self, *, status: str | None = None, limit: int | None = 20) -> list[DebateListing]:
        """Saved debates, newest first."""
        with self._store() as store:
            return store.list(status=status, limit=limit)

    def _request(self, problem: str, clarify: bool) -> DebateRequest:
        text = problem_text(problem, self.config.limits)  # every front door's rule: the CLI's, the web API's
        return DebateRequest(problem=text, config=self.config, config_dir=self.config_dir, clarify=clarify)

    async def _with_engine(self, run: Callable[[DebateEngine], Awaitable[DebateState]]) -> DebateResult:
        with self._store() as store:
            pool = self._providers or ProviderPool()
            bus = EventBus()
            ran = _RanDebate(bus)
            try:
                return DebateResult(await run(DebateEngine(store, pool, bus, turns=self._turns)))
            finally:
                if self._providers is None:
                    await pool.aclose()
                ran.fire_hooks(store)

    async def _streamed(
        self, run: Callable[[DebateEngine], Awaitable[DebateState]], deltas: bool = True
    ) -> AsyncIterator[Event]:
        events: asyncio.Queue[Event] = asyncio.Queue()
        bus = EventBus()
        bus.subscribe(events.put_nowait, deltas=deltas)
        ran = _RanDebate(bus)
        with self._store() as store:
            pool = self._providers or ProviderPool()
            task = asyncio.ensure_future(run(DebateEngine(store, pool, bus, turns=self._turns)))
            try:
                while not (task.done() and events.empty()):
                    getter = asyncio.ensure_future(events.get())
                    await asyncio.wait({getter, task}, return_when=asyncio.FIRST_COMPLETED)
                    if getter.done():
                        yield getter.result()
                    else:
                        getter.cancel()
                yield Finished(task.result().id, DebateResult(task.result()))
            finally:
                if not task.done():
                    task.cancel()
                    await _settled(task)
                if self._providers is None:
                    await pool.aclose()
                ran.fire_hooks(store)

    @contextmanager
    def _store(self) -> Iterator[DebateStore]:
        if self._memory is not None:
            yield self._memory
        elif isinstance(self._store_choice, DebateStore):
            yield self._store_choice
        else:
            store = open_store(self._store_choice)
            try:
                yield store
            finally:
                store.close()


async def _settled(task: asyncio.Future[Any]) -> None:
    """Wait until ``task`` (a cancelled run) is done, even through further cancellations of the waiter, which
    are raised once it is: the run must get to save the debate as interrupted, or it would stay ``running``."""
    cancelled = False
    while not task.done():
        try:
            await asyncio.wait({task})
        except asyncio.CancelledError:
            cancelled = True
    if cancelled:
        raise asyncio.CancelledError


class _RanDebate:
    """The debate a run of the engine ran (told by its bus), whose hooks run once it is saved."""

    def __init__(self, bus: EventBus) -> None:
        self.debate_id: str | None = None
        bus.subscribe(self._seen)

    def _seen(self, event: Event) -> None:
        if isinstance(event, DebateStarted):
            self.debate_id = event.debate_id

    def fire_hooks(self, store: DebateStore) -> None:
        """Start the saved debate's hooks when it finished (in the background: the process waits for them,
        bounded, at exit); a failure is logged, never raised."""
        if self.debate_id is None:
            return
        try:
            state = store.load(self.debate_id)
            saved = state.saved_config()
            if saved is None or not saved.hooks.active:
                return
            from dialectic.reporting.hooks import fire, log_warning

            fire(saved.hooks, state, warn=log_warning)
        except Exception as exc:  # the debate is saved: nothing about its hooks may change its outcome
            logging.getLogger("dialectic.hooks").warning("debate %s: hooks not run: %s", self.debate_id, exc)


def load_config_over(config: SystemConfig, **overrides: Any) -> SystemConfig:
    """``config`` with the overrides :func:`load_config` takes."""
    given = {k: v for k, v in overrides.items() if v is not None}
    resolved, _ = apply_overrides(config, **given, names=ARGUMENT_NAMES)
    return resolved


def _with_participants(
    config: SystemConfig, agents: Sequence[Agent | AgentConfig] | None, judge: Agent | AgentConfig | None
) -> SystemConfig:
    template = config.template_agent()
    taken: set[str] = set()
    built = config.agents
    if agents is not None:
        if not agents:
            raise InvalidArgumentsError("agents: give at least one agent")
        built = [a if isinstance(a, AgentConfig) else a.config(template, taken) for a in agents]
    chosen = config.judge
    if judge is not None:
        chosen = judge if isinstance(judge, AgentConfig) else judge.config(template, taken)
    return SystemConfig.model_validate({**config.model_dump(), "agents": built, "judge": chosen})


def _run_sync(work: Awaitable[T]) -> T:
    """``work`` run to its end on a new event loop; a clear error inside one that is running."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_awaited(work))
    if inspect.iscoroutine(work):
        work.close()  # never started: nothing to clean up, and no "never awaited" warning
    raise InvalidArgumentsError("run_sync cannot run inside an event loop: await run() instead")


async def _awaited(work: Awaitable[T]) -> T:
    return await work
