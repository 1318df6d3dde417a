"""The web feed follows a running debate's log from the engine's ChangesSaved events, reading the store
only to fill a gap: the ids it sends are the store's numbers either way."""

from __future__ import annotations

import builtins

from dialectic.core import events as ev
from dialectic.core.changes import Change, CursorMoved, DebateCreated, RoundStarted, StatusChanged
from dialectic.core.domain import DebateState
from dialectic.store import MemoryStore
from dialectic.web.feed import DebateFeed, Subscriber


class CountingStore(MemoryStore):
    def __init__(self) -> None:
        super().__init__()
        self.reads = 0

    def changes_since(self, debate_id: str, after: int) -> builtins.list[tuple[int, Change]]:
        self.reads += 1
        return super().changes_since(debate_id, after)


def sent(subscriber: Subscriber) -> list[tuple[str, str | None]]:
    return [(item.event, item.id) for item in subscriber.ready()]


def started_debate() -> tuple[CountingStore, DebateFeed, Subscriber]:
    store = CountingStore()
    store.append("deb-1", DebateCreated(state=DebateState(id="deb-1", problem="p")))
    feed = DebateFeed("deb-1", store, scrub=lambda text: text)
    subscriber = feed.subscribe(after=0)
    return store, feed, subscriber


def save(store: CountingStore, feed: DebateFeed, *changes: Change) -> None:
    feed.on_event(ev.ChangesSaved("deb-1", store.append("deb-1", *changes), changes))


def test_changes_the_engine_announces_go_out_with_their_numbers_without_reading_the_store() -> None:
    store, feed, subscriber = started_debate()
    assert sent(subscriber) == [("debate_created", "1")]
    reads = store.reads
    save(store, feed, StatusChanged(status="running"), RoundStarted(round_number=1))
    save(store, feed, CursorMoved(next_node="proposal"))
    assert sent(subscriber) == [("status_changed", "2"), ("round_started", "3"), ("cursor_moved", "4")]
    assert store.reads == reads and feed.status == "running"


def test_changes_saved_without_an_announcement_are_read_from_the_store_once_and_in_order() -> None:
    store, feed, subscriber = started_debate()
    sent(subscriber)
    store.append("deb-1", StatusChanged(status="running"))  # no ChangesSaved: a gap before the next one
    save(store, feed, RoundStarted(round_number=1))
    save(store, feed, CursorMoved(next_node="proposal"))
    assert sent(subscriber) == [("status_changed", "2"), ("round_started", "3"), ("cursor_moved", "4")]


def test_without_subscribers_the_feed_keeps_count_and_a_new_client_gets_everything_once() -> None:
    store = CountingStore()
    store.append("deb-1", DebateCreated(state=DebateState(id="deb-1", problem="p")))
    feed = DebateFeed("deb-1", store, scrub=lambda text: text)
    save(store, feed, StatusChanged(status="running"))  # a gap (the first change), nobody to send to
    save(store, feed, RoundStarted(round_number=1))
    subscriber = feed.subscribe(after=0)
    save(store, feed, CursorMoved(next_node="proposal"))
    assert [event_id for _, event_id in sent(subscriber)] == ["1", "2", "3", "4"]
