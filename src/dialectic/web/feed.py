"""The event stream of each debate: its stored changes, replayable by id, and the live events between them.

Each stored change goes out with its ``seq`` as the event id as soon as the engine saved it: the
engine publishes :class:`~dialectic.core.events.ChangesSaved` with the changes and their numbers after
every append of a run, so the feed need not read them back. When those numbers do not follow on
from the last change sent (changes saved without that event: a debate's first, or a resume's
budget), and when a run starts or ends, the feed reads what is new from the store instead. A
client that reconnects with ``Last-Event-ID: N`` gets every change after N from the store, once,
in order.

Live events (token deltas, calls starting and ending, phases, warnings) are not stored. They
are numbered after the last change, ``N.1``, ``N.2``…, so their ids keep increasing; a
reconnecting client cannot get back the ones it missed, but it gets the text streamed so far
of every call still in flight, so nothing it shows is lost. A debate at rest (not run by this
server, and not by a live process elsewhere) has a stream that ends with an ``end`` event once
its changes are replayed; a running one's ends the same way when its run stops.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field

from dialectic.core import events as ev
from dialectic.core.changes import Change, DebateCreated, StatusChanged
from dialectic.core.domain import utc_now
from dialectic.store.base import DebateStore
from dialectic.store.leases import owner_process_gone, shown_status
from dialectic.web.presenter import change_payload, dumps, event_payload, live_name

CallKey = tuple[str, int | None, str | None, str | None]
"""``(agent, round, kind, target)``: one call in flight."""

QUEUE_LIMIT = 20_000
"""Events a client may fall behind by; past it, its stream ends and it reconnects from the store."""


@dataclass(frozen=True)
class Outgoing:
    """One event as it leaves: ``data`` is JSON text; ``id`` is ``None`` for events that set no id."""

    event: str
    data: str
    id: str | None = None


END_EVENT = "end"


class Subscriber:
    """One client's queue. ``closed`` once no more will be put in (its debate came to rest, or it fell
    too far behind); ``done`` once the client has taken everything, the end included."""

    def __init__(self, limit: int = QUEUE_LIMIT) -> None:
        self._queue: asyncio.Queue[Outgoing | None] = asyncio.Queue()
        self._limit = limit
        self.closed = False
        self.done = False

    def put(self, item: Outgoing) -> None:
        if self.closed:
            return
        if self._queue.qsize() >= self._limit:
            self.close()
            return
        self._queue.put_nowait(item)

    def close(self) -> None:
        """No more events: the client's stream ends after what is queued."""
        if not self.closed:
            self.closed = True
            self._queue.put_nowait(None)

    async def next(self, timeout: float) -> Outgoing | None:
        """The next event; ``None`` at the end (``done``) or when ``timeout`` passed with nothing to send."""
        if self.done:
            return None
        if self._queue.empty():
            try:
                async with asyncio.timeout(timeout):  # a timer, not a task per wait as wait_for makes
                    item = await self._queue.get()
            except TimeoutError:
                return None
        else:
            item = self._queue.get_nowait()
        self.done = item is None
        return item

    def ready(self) -> list[Outgoing]:
        """Every event already queued, without waiting (sent together: one write for a burst of deltas)."""
        items: list[Outgoing] = []
        while not self.done and not self._queue.empty():
            item = self._queue.get_nowait()
            if item is None:
                self.done = True
            else:
                items.append(item)
        return items


@dataclass
class LiveCall:
    started: str
    """The ``agent_started`` payload (JSON text)."""
    text: str = ""


@dataclass
class DebateFeed:
    """The stream of one debate, shared by every client watching it."""

    debate_id: str
    store: DebateStore
    scrub: Callable[[str], str]
    seq: int = 0
    """The last change sent (or passed over while nobody watched)."""
    status: str | None = None
    live_count: int = 0
    calls: dict[CallKey, LiveCall] = field(default_factory=dict)
    subscribers: set[Subscriber] = field(default_factory=set)

    def sync(self) -> None:
        """Send every change saved since the last one sent, read from the store."""
        for seq, change in self.store.changes_since(self.debate_id, self.seq):
            self._take(seq, change)

    def saved(self, last_seq: int, changes: tuple[Change, ...]) -> None:
        """The engine saved ``changes`` as numbers up to ``last_seq``: send them, unless some came between."""
        first = last_seq - len(changes) + 1
        if first != self.seq + 1:
            if self.subscribers:
                self.sync()  # changes saved without a ChangesSaved event; otherwise the next subscribe reads them
            return
        for seq, change in enumerate(changes, start=first):
            self._take(seq, change)

    def _take(self, seq: int, change: Change) -> None:
        self.seq, self.live_count = seq, 0
        if isinstance(change, StatusChanged):
            self.status = change.status
        elif isinstance(change, DebateCreated):
            self.status = change.state.status
        if self.subscribers:
            self._send(Outgoing(change.kind, self.scrub(dumps(change_payload(seq, change))), str(seq)))

    def on_event(self, event: ev.Event) -> None:
        if isinstance(event, ev.ChangesSaved):
            self.saved(event.last_seq, event.changes)
            return
        if isinstance(event, ev.DebateStarted) and self.subscribers:
            self.sync()  # the debate's first change, or a resume's budget, was saved without a ChangesSaved event
        name = live_name(event)
        if name is None:
            return
        data = self.scrub(dumps(event_payload(event)))
        self._track(event, data)
        if self.subscribers:
            self.live_count += 1
            self._send(Outgoing(name, data, f"{self.seq}.{self.live_count}"))

    def _track(self, event: ev.Event, data: str) -> None:
        if isinstance(event, ev.AgentStarted):
            self.calls[_key(event)] = LiveCall(data)
        elif isinstance(event, ev.AgentCompleted):
            self.calls.pop(_key(event), None)
        elif isinstance(event, ev.TokenDelta):
            call = self.calls.get(_key(event))
            if call is not None:
                call.text = call.text[: event.offset] + event.text

    def subscribe(self, after: int) -> Subscriber:
        """A new client that saw every change up to ``after``: it gets those since, then the calls in flight."""
        self.sync()
        subscriber = Subscriber()
        for seq, change in self.store.changes_since(self.debate_id, after):
            if seq > self.seq:
                break  # saved after the sync above: impossible without an await between, kept for safety
            subscriber.put(Outgoing(change.kind, self.scrub(dumps(change_payload(seq, change))), str(seq)))
        for key, call in self.calls.items():
            subscriber.put(Outgoing("agent_started", call.started))
            if call.text:
                agent, number, kind, target = key
                snapshot = {
                    "debateId": self.debate_id,
                    "agentId": agent,
                    "roundNumber": number,
                    "kind": kind,
                    "targetId": target,
                    "offset": 0,
                    "text": call.text,
                }
                subscriber.put(Outgoing("token", self.scrub(dumps(snapshot))))
        self.subscribers.add(subscriber)
        return subscriber

    def unsubscribe(self, subscriber: Subscriber) -> None:
        self.subscribers.discard(subscriber)

    def end(self) -> None:
        """The debate came to rest: send what is new, then end every client's stream."""
        if self.subscribers:
            self.sync()
        for subscriber in list(self.subscribers):
            subscriber.put(Outgoing(END_EVENT, dumps({"status": self.status})))
            subscriber.close()
        self.subscribers.clear()
        self.calls.clear()

    def _send(self, item: Outgoing) -> None:
        for subscriber in list(self.subscribers):
            subscriber.put(item)
            if subscriber.closed:
                self.subscribers.discard(subscriber)


def _key(event: ev.AgentStarted | ev.AgentCompleted | ev.TokenDelta) -> CallKey:
    return (event.agent_id, event.round_number, event.kind, event.target_id)


class FeedHub:
    """Every debate's feed; subscribed to the engine's event bus (token deltas included)."""

    def __init__(self, store: DebateStore, scrub: Callable[[str], str], running_here: Callable[[str], bool]) -> None:
        self._store = store
        self._scrub = scrub
        self._running_here = running_here
        self._feeds: dict[str, DebateFeed] = {}

    def feed(self, debate_id: str) -> DebateFeed:
        found = self._feeds.get(debate_id)
        if found is None:
            found = DebateFeed(debate_id, self._store, self._scrub)
            self._feeds[debate_id] = found
        return found

    def __call__(self, event: ev.Event) -> None:
        self.feed(event.debate_id).on_event(event)

    def subscribe(self, debate_id: str, after: int) -> tuple[DebateFeed, Subscriber]:
        """A client of ``debate_id``'s stream; at rest, its stream holds the replay and then ends."""
        feed = self.feed(debate_id)
        if feed.status is None:
            feed.status = self._store.load(debate_id).status
        subscriber = feed.subscribe(after)
        if self.at_rest(feed):
            self.end(debate_id)
        return feed, subscriber

    def unsubscribe(self, feed: DebateFeed, subscriber: Subscriber) -> None:
        feed.unsubscribe(subscriber)
        self._forget_if_idle(feed)

    def poll(self, feed: DebateFeed) -> None:
        """For a debate another process runs: send what it saved; end the streams once it is at rest."""
        if self._running_here(feed.debate_id):
            return
        feed.sync()
        if self.at_rest(feed):
            self.end(feed.debate_id)

    def at_rest(self, feed: DebateFeed) -> bool:
        """Not run here, and not running (or ``running`` with no live run holding it: stale)."""
        if self._running_here(feed.debate_id):
            return False
        if feed.status != "running":
            return True
        lease = self._store.read_lease(feed.debate_id)
        return shown_status("running", lease, utc_now(), owner_process_gone) != "running"

    def end(self, debate_id: str) -> None:
        """A run stopped (or the debate was found at rest): end the streams watching it."""
        feed = self._feeds.get(debate_id)
        if feed is None:
            return
        feed.end()
        self._forget_if_idle(feed)

    def _forget_if_idle(self, feed: DebateFeed) -> None:
        if not feed.subscribers and not feed.calls and not self._running_here(feed.debate_id):
            self._feeds.pop(feed.debate_id, None)
