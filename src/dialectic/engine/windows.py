"""Each participant's context window: knowing it, counting every prompt against it, the two thresholds.

A participant's window (agents and the judge) is, in this order: its ``contextWindow`` in the
configuration; what its provider says now (:func:`~dialectic.llm.windows.learn_window`); a window
learned from a refusal and kept in the store for its endpoint and model
(:class:`~dialectic.store.base.WindowMemory`), or in this debate's own record; else unknown until a
server refuses a prompt as too long (:class:`~dialectic.core.errors.ContextWindowExceeded`), which
teaches it: the ``n_ctx`` the server named, or, when it named none, :data:`REFUSAL_CEILING` of the
prompt's counted size. What the server says comes before what a refusal taught an earlier debate:
a server restarted on the same address with another ``-c`` is met as it is now (a server that
says one window and refuses at a smaller one costs one refusal a debate, which teaches it again).

Every request a participant sends passes a :class:`WindowGate` (a request observer, see
:mod:`dialectic.llm.observe`) that counts it (:func:`~dialectic.llm.windows.count_prompt`) and
keeps the largest. At :data:`WARN_SHARE` of the window the participant's first warning is given
(once); past :func:`act_line` (:data:`ACT_SHARE`) the gate refuses to send a call's first request
(:class:`Overflow`) so that :mod:`dialectic.engine.fitting` can shrink it by
``debate.contextStrategy``. What each participant's prompts took is saved as a
:class:`~dialectic.core.domain.WindowUse` (:class:`~dialectic.core.changes.WindowNoted`).

Participants calling the same model on the same endpoint share what is known of its window
(:class:`ServerWindow`). While it is unknown, prompts larger than any the server took (and than
:data:`PROBE_FLOOR`) go out one at a time, so however many calls start together, learning the
window costs one refusal.

An estimated count (no tokenizer at hand) is calibrated by what the server counted, upwards only:
when the server counts a prompt as more tokens than the estimate (code, other scripts), later
estimates are scaled by that ratio.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from dialectic.agents.participants import Speaker
from dialectic.core.changes import WindowNoted
from dialectic.core.domain import WindowSource, WindowUse
from dialectic.core.errors import ContextWindowExceeded, DialecticError
from dialectic.llm.base import Completion, CompletionRequest, LLMProvider
from dialectic.llm.observe import RequestObserver
from dialectic.llm.windows import count_prompt, learn_window
from dialectic.store.base import WindowMemory

log = logging.getLogger(__name__)

WARN_SHARE = 0.8
"""A prompt this share of the window gets its participant's one warning."""
ACT_SHARE = 0.9
"""A prompt past this share of the window is shrunk by ``debate.contextStrategy`` before it is sent."""
REFUSAL_CEILING = 0.9
"""A refusal that names no window: the window is taken to be at most this share of the refused prompt."""
PROBE_FLOOR = 1024
"""Tokens under which a prompt is sent without waiting its turn while its window is unknown: no model
in use today has a smaller window, so such a prompt cannot teach anything (see :class:`ServerWindow`)."""
MAX_FACTOR = 4.0
"""The most the calibration of estimates scales them by (a server's odd count must not make every prompt look huge)."""


def warn_line(window: int) -> int:
    """Tokens from which a prompt earns the warning (:data:`WARN_SHARE` of the window)."""
    return math.floor(window * WARN_SHARE)


def act_line(window: int, max_tokens: int | None = None) -> int:
    """The most tokens a prompt may have before the strategy applies.

    :data:`ACT_SHARE` of the window, less when the reply's ``maxTokens`` would not fit after the
    prompt (a server counts prompt and reply in one window), but never under half the window: a
    ``maxTokens`` near the window's size is the configuration's problem, not a reason to drop
    every round from every prompt.
    """
    line = math.floor(window * ACT_SHARE)
    if max_tokens is not None:
        line = min(line, window - max_tokens)
    return max(line, window // 2)


def window_after_refusal(error: ContextWindowExceeded, counted: int) -> int:
    """The window a refusal teaches: the one the server named, else a ceiling under the refused prompt."""
    if error.window:
        return error.window
    return max(1, math.floor(counted * REFUSAL_CEILING))


def fits_whole(window: int, tokens: int, max_tokens: int | None) -> bool:
    """Whether a prompt of ``tokens`` fits ``window`` with room for its reply's ``max_tokens`` (one token at least)."""
    return tokens + max(1, max_tokens or 0) <= window


class Overflow(Exception):
    """A call's first request passed the act line (or could not fit the window at all) and was not sent
    (a smaller prompt may be tried); ``max_tokens``: the reply's limit it asked for."""

    def __init__(self, tokens: int, window: int, max_tokens: int | None = None) -> None:
        super().__init__(f"{tokens} tokens over the act line of a {window}-token window")
        self.tokens = tokens
        self.window = window
        self.max_tokens = max_tokens


@dataclass(frozen=True)
class Counted:
    """A request as the gate counted it: the raw count, and that count as calibrated."""

    raw: int
    tokens: int
    exact: bool


class ServerWindow:
    """What is known of one model's window on one endpoint, shared by every participant that calls it.

    While the window is unknown, a prompt larger than every prompt the server has taken so far
    (:attr:`proven`), and than :data:`PROBE_FLOOR`, is a *probe*: one probe at a time is sent, the
    others wait for it. If the server refuses it, the window is learned and the prompts that waited
    are shrunk to it before they are sent; if it takes it, they go (or probe further). So learning a
    window costs one refusal, however many calls were about to go out at once (a window smaller
    than the floor, which no model in use has, could cost one for each call in flight).
    """

    def __init__(self, window: int | None = None, source: WindowSource | None = None) -> None:
        self.window = window
        self.source = source
        self.factor = 1.0
        """Calibration of estimates (:meth:`WindowKeeper.calibrate`): at least 1, never making a prompt look smaller."""
        self.proven = 0
        self.probing = False
        self._settled: asyncio.Condition | None = None

    def _condition(self) -> asyncio.Condition:
        if self._settled is None:
            self._settled = asyncio.Condition()
        return self._settled

    async def admit(self, tokens: int) -> bool:
        """Wait until a prompt of ``tokens`` may go out; ``True`` when it goes as the probe (see :meth:`settle`)."""
        settled = self._condition()
        async with settled:
            while self.window is None and tokens > max(self.proven, PROBE_FLOOR):
                if not self.probing:
                    self.probing = True
                    return True
                await settled.wait()
            return False

    async def settle(self, tokens: int | None) -> None:
        """The probe ended: ``tokens`` the server took (``None``: it did not take it)."""
        settled = self._condition()
        async with settled:
            self.probing = False
            if tokens is not None:
                self.proven = max(self.proven, tokens)
            settled.notify_all()

    def took(self, tokens: int) -> None:
        """The server took a prompt of ``tokens`` (no probe: known to fit, or the window known)."""
        self.proven = max(self.proven, tokens)


class WindowKeeper:
    """One participant's window, the counts of its prompts, and what was done about them."""

    def __init__(
        self,
        speaker: Speaker,
        *,
        endpoint: str,
        memory: WindowMemory | None,
        use: WindowUse,
        shared: ServerWindow,
    ) -> None:
        self.name = speaker.name
        self.provider: LLMProvider = speaker.client.provider
        self.model = speaker.config.model
        self.endpoint = endpoint
        self.use = use
        self.shared = shared
        self.own: int | None = speaker.config.context_window
        """The configured ``contextWindow``: it wins over what is known of the endpoint, unless a server's
        refusal showed the window to be smaller."""
        self._memory = memory
        self.dirty = False
        self.sync()

    def _refuted(self) -> bool:
        """Whether a refusal taught a smaller window than the configured one (for any participant on the endpoint)."""
        learned = self.shared.window if self.shared.source == "refusal" else None
        return self.own is not None and learned is not None and learned < self.own

    @property
    def window(self) -> int | None:
        if self.own is None or self._refuted():
            return self.shared.window
        return self.own

    @property
    def source(self) -> WindowSource | None:
        if self.own is None or self._refuted():
            return self.shared.source
        return "config"

    def sync(self) -> None:
        """The saved use, told what is now known of the window (another participant may have learned it)."""
        if (self.use.window, self.use.source) != (self.window, self.source):
            self.use = self.use.model_copy(update={"window": self.window, "source": self.source})
            self.dirty = True

    def count(self, request: CompletionRequest) -> Counted:
        counted = count_prompt(self.provider, request)
        if counted.exact:
            return Counted(counted.tokens, counted.tokens, True)
        return Counted(counted.tokens, math.ceil(counted.tokens * self.shared.factor), False)

    def over(self, tokens: int, max_tokens: int | None) -> bool:
        window = self.window
        return window is not None and tokens > act_line(window, max_tokens)

    def reached(self, tokens: int) -> bool:
        """A prompt of ``tokens`` is about to go (or to be shrunk); ``True`` when it is the first of this
        participant to reach 80% of the window: its one warning is due."""
        window = self.window
        if self.use.warned or window is None or tokens < warn_line(window):
            return False
        self.use = self.use.model_copy(update={"warned": True})
        self.dirty = True
        return True

    def sent(self, counted: Counted, *, first: bool) -> None:
        """Note a prompt that went through: the prompts counted, and the largest."""
        self.sync()
        use = self.use
        update: dict[str, object] = {}
        if first:
            update["prompts"] = use.prompts + 1
        if counted.tokens > use.largest_prompt:
            update["largest_prompt"] = counted.tokens
            update["counted_by"] = "tokenizer" if counted.exact else "estimate"
        if update:
            self.use = use.model_copy(update=update)
            self.dirty = True

    def calibrate(self, counted: Counted, served: int) -> None:
        """Scale later estimates by how the server counted this prompt (``served`` tokens).

        Only ever upwards: an estimate is already conservative for prose, and a server whose usage
        is counted in other units than its window (some count words) must not make prompts look
        smaller than they are. Text denser in tokens (code, other scripts) raises it.
        """
        if counted.exact or counted.raw <= 0 or served <= 0:
            return
        self.shared.factor = min(MAX_FACTOR, max(self.shared.factor, served / counted.raw))

    def refused(self, error: ContextWindowExceeded, counted: Counted) -> int:
        """A server refused a prompt as too long: learn the window from it (and keep it); the window learned."""
        if error.prompt_tokens:
            self.calibrate(counted, error.prompt_tokens)
        learned = window_after_refusal(error, error.prompt_tokens or counted.tokens)
        known = self.window
        if known is not None and not error.window:
            learned = min(learned, known)
        self.shared.window, self.shared.source = learned, "refusal"
        # The refusal's warning is the participant's warning: a later prompt at 80% gets no second one.
        self.use = self.use.model_copy(update={"refusals": self.use.refusals + 1, "warned": True})
        self.dirty = True
        self.sync()
        if self._memory is not None:
            try:
                self._memory.remember_window(self.endpoint, self.model, learned)
            except DialecticError:  # a store that cannot keep it only means learning it again next time
                log.debug("could not keep the window of %s on %s", self.model, self.endpoint, exc_info=True)
        return learned

    def fired(self, strategy: str) -> bool:
        """The strategy shrank (or stopped on) a prompt; ``True`` the first time it did for this participant."""
        fired = dict(self.use.fired)
        first = strategy not in fired
        fired[strategy] = fired.get(strategy, 0) + 1
        self.use = self.use.model_copy(update={"fired": fired})
        self.dirty = True
        return first

    def sent_over(self) -> bool:
        """A prompt went out over the act line (nothing left to shrink); ``True`` the first time."""
        first = self.use.over_sent == 0
        self.use = self.use.model_copy(update={"over_sent": self.use.over_sent + 1})
        self.dirty = True
        return first

    def note(self) -> WindowNoted | None:
        """The change that saves what changed since the last note, if anything did."""
        self.sync()
        if not self.dirty:
            return None
        self.dirty = False
        return WindowNoted(use=self.use)


class WindowGate:
    """The request observer of one attempt at a call: every request is counted against the window.

    The attempt's first request is the prompt: past the act line it is not sent (:class:`Overflow`,
    before the observer the gate wraps — the budget — sees it); with ``may_refuse`` off, only a
    prompt that cannot fit the window with its reply (``must_fit``, :func:`fits_whole`) is stopped so.
    The requests that follow within the call (a continuation of a cut-off reply, a repair of bad
    JSON, a tool step) are part of a reply under way: they go out, counted, unless the window is
    known and they could not fit it, in which case they are refused here as the server would refuse
    them (no request is made).
    While the window is unknown, any request of the attempt may have to wait its turn as a probe
    (see :class:`ServerWindow`; the probe then lasts the rest of the attempt, so a continuation
    refused as too long counts for it), so a continuation larger than any prompt taken cannot
    cost a second refusal while another probe is out. A refusal by the server teaches the keeper
    the window.
    """

    def __init__(
        self,
        keeper: WindowKeeper,
        inner: RequestObserver | None,
        *,
        may_refuse: bool,
        on_warn: Callable[[Counted], None],
        on_refused: Callable[[ContextWindowExceeded], None],
        must_fit: bool = False,
    ) -> None:
        self.keeper = keeper
        self._inner = inner
        self._may_refuse = may_refuse
        self._must_fit = must_fit
        self._on_warn = on_warn
        self._on_refused = on_refused
        self._first_request: CompletionRequest | None = None
        self._probing = False
        self._counts: dict[int, tuple[CompletionRequest, Counted]] = {}
        self.first_tokens: int | None = None

    async def before(self, provider: str, request: CompletionRequest) -> None:
        counted = self._count_of(request)
        if counted is None:
            counted = self.keeper.count(request)
            self._counts[id(request)] = (request, counted)  # the request kept, so its id is never reused
        if self._first_request is None:
            self._first_request = request
            self.first_tokens = counted.tokens
        window = self.keeper.window
        if self.keeper.own is None and not self._probing:
            # Any request of the attempt may be the probe: a continuation outgrows its prompt.
            self._probing = await self.keeper.shared.admit(counted.tokens)
            window = self.keeper.window  # a probe that went before may have taught it
        if request is self._first_request:
            if self.keeper.reached(counted.tokens):
                self._on_warn(counted)
            if window is not None and (
                (self._may_refuse and self.keeper.over(counted.tokens, request.max_tokens))
                or (self._must_fit and not fits_whole(window, counted.tokens, request.max_tokens))
            ):
                raise Overflow(counted.tokens, window, request.max_tokens)
        elif window is not None and counted.tokens >= window:
            raise ContextWindowExceeded(
                f"{self.keeper.name}: the request ({counted.tokens} tokens) cannot fit the context window "
                f"({window} tokens); not sent",
                window=window,
                prompt_tokens=counted.tokens,
            )
        if self._inner is not None:
            await self._inner.before(provider, request)

    def _count_of(self, request: CompletionRequest) -> Counted | None:
        entry = self._counts.get(id(request))
        return entry[1] if entry is not None else None

    def succeeded(self, request: CompletionRequest, completion: Completion) -> None:
        """The prompt went through: it counts towards the largest sent (and the warning), and calibrates."""
        counted = self._count_of(request)
        if counted is not None:
            usage = completion.usage
            if not getattr(usage, "estimated", None):
                self.keeper.calibrate(counted, usage.input_tokens)
            self.keeper.shared.took(counted.tokens)
            self.keeper.sent(counted, first=request is self._first_request)
        if self._inner is not None:
            self._inner.succeeded(request, completion)

    def failed(self, request: CompletionRequest, error: BaseException) -> None:
        counted = self._count_of(request)
        if isinstance(error, ContextWindowExceeded) and counted is not None:
            self.keeper.refused(error, counted)
            self._on_refused(error)
        if self._inner is not None:
            self._inner.failed(request, error)

    def served(self, request: CompletionRequest, completion: Completion) -> None:
        """Answered from the call cache: nothing reached the server, so nothing is learned of its window."""
        if self._inner is not None:
            self._inner.served(request, completion)

    async def close(self, *, ok: bool) -> None:
        """The attempt ended (``ok``: its reply came); a probe's turn passes on."""
        if self._probing:
            self._probing = False
            await self.keeper.shared.settle(self.first_tokens if ok else None)


class WindowBook:
    """The keepers of a run's participants, made on first use; their notes for the next save.

    Participants that call the same model on the same endpoint share what is known of its window
    (:class:`ServerWindow`): a window one of them learns, the others know at once.
    """

    def __init__(
        self,
        *,
        memory: WindowMemory | None = None,
        endpoints: Mapping[str, str] | None = None,
        saved: Mapping[str, WindowUse] | None = None,
    ) -> None:
        self._memory = memory
        self._endpoints = dict(endpoints or {})
        self._saved = dict(saved or {})
        self._keepers: dict[str, WindowKeeper] = {}
        self._servers: dict[tuple[str, str], ServerWindow] = {}
        self._lock: asyncio.Lock | None = None

    async def keeper(self, speaker: Speaker) -> WindowKeeper:
        """``speaker``'s keeper, its window found the first time (see the module's docstring)."""
        found = self._keepers.get(speaker.id)
        if found is not None:
            return found
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:  # one lookup per endpoint and model, even when the first calls start together
            found = self._keepers.get(speaker.id)
            if found is None:
                endpoint = self._endpoints.get(speaker.id, speaker.config.provider)
                saved = self._saved.get(speaker.id)
                shared = await self._server(speaker, endpoint, saved)
                use = saved.model_copy() if saved is not None else WindowUse(agent_id=speaker.id)
                found = WindowKeeper(speaker, endpoint=endpoint, memory=self._memory, use=use, shared=shared)
                self._keepers[speaker.id] = found
        return found

    async def _server(self, speaker: Speaker, endpoint: str, saved: WindowUse | None) -> ServerWindow:
        """What is known of the window of ``speaker``'s model on its endpoint: kept, said by the server, or nothing."""
        key = (endpoint, speaker.config.model)
        known = self._servers.get(key)
        if known is not None:
            return known
        told = await learn_window(speaker.client.provider, speaker.config.model)
        if told is not None:
            known = ServerWindow(told, "server")
        elif (remembered := self._remembered(endpoint, speaker.config.model)) is not None:
            known = ServerWindow(remembered, "remembered")
        elif saved is not None and saved.window is not None and saved.source in ("refusal", "remembered"):
            known = ServerWindow(saved.window, saved.source)
        else:
            known = ServerWindow()
        self._servers[key] = known
        return known

    def _remembered(self, endpoint: str, model: str) -> int | None:
        if self._memory is None:
            return None
        try:
            return self._memory.remembered_window(endpoint, model)
        except DialecticError:
            log.debug("could not read the window of %s on %s", model, endpoint, exc_info=True)
            return None

    def notes(self) -> list[WindowNoted]:
        """What changed since the last save, one note per participant whose use changed."""
        return [note for keeper in self._keepers.values() if (note := keeper.note()) is not None]
