"""``GET /api/debates``: the debates list a page at a time, read from the store's index (keyset paging).

A page is one indexed query (:meth:`~dialectic.store.base.DebateStore.page`) for ``limit + 1``
debates (the one past the page says whether there is more), and one lease read for each
``running`` debate on the page (to tell ``stale`` from ``running``): no log is folded, and
the cost does not grow with the debates stored. Filtering on ``running`` or ``stale``, which
are told apart by the leases, scans the debates stored as running (few) in batches until the
page is full.

The cursor is opaque to clients: the place of the page's last debate in the listing's order
(:class:`~dialectic.store.base.PageKey`: created time and ordinal), as URL-safe base64 of
``<created_at ISO, UTC, microseconds>|<ordinal>``. It stays valid whatever is created or
deleted meanwhile. Anything but a cursor this server wrote is a 400.
"""

from __future__ import annotations

import base64
import re
from datetime import UTC, datetime
from typing import Any

from dialectic.core.titles import without_marks
from dialectic.store.base import DebateStore, ListedDebate, ListingDetails, PageKey, cut_line
from dialectic.store.leases import STALE
from dialectic.web.errors import ApiError
from dialectic.web.presenter import TokenTotals
from dialectic.web.validation import MAX_DIGITS, SQLITE_MAX_INT
from dialectic.web.views import PROBLEM_CHARS, listing_row, shown

RUNNING = "running"
RUNNING_BATCH = 100
"""Debates stored as running read per query while filtering on ``running`` or ``stale``."""
CURSOR_MAX_CHARS = 100
"""Longer than any cursor this server writes (about 50 characters)."""
DEFAULT_FORMAT = "critique-refine"
"""The format a debate whose configuration names none is shown with (as :func:`listing_row` does)."""
_ORDINAL = re.compile(rf"[0-9]{{1,{MAX_DIGITS}}}")
BAD_CURSOR = "the cursor is not a nextCursor this server gave (start again without one)"

Row = tuple[ListedDebate, str]
"""A debate on the page and the status it is shown with."""


def debates_page(
    store: DebateStore, *, status: str | None, limit: int, cursor: str | None, now: datetime
) -> dict[str, Any]:
    """The page's JSON body: ``items`` (see :func:`summary_row`) and ``nextCursor`` (``None`` on the last page).

    ``status`` is one of the shown statuses (checked by the caller); ``cursor`` is checked here."""
    after = decode_cursor(cursor) if cursor is not None else None
    if status in (RUNNING, STALE):
        rows, more = _running_page(store, status, limit, after, now)
    else:
        rows, more = _stored_page(store, status, limit, after, now)
    return {
        "items": [_item(store, entry, shown_status) for entry, shown_status in rows],
        "nextCursor": encode_cursor(rows[-1][0].key) if more and rows else None,
    }


def _stored_page(
    store: DebateStore, status: str | None, limit: int, after: PageKey | None, now: datetime
) -> tuple[list[Row], bool]:
    """A page where the stored status decides (no filter, or a status that is never shown otherwise)."""
    found = store.page(status=status, limit=limit + 1, after=after)
    return [(entry, shown(store, entry.listing, now)) for entry in found[:limit]], len(found) > limit


def _running_page(
    store: DebateStore, status: str, limit: int, after: PageKey | None, now: datetime
) -> tuple[list[Row], bool]:
    """A page of the debates stored as running that are shown as ``status``: their leases decide."""
    rows: list[Row] = []
    while True:
        batch = store.page(status=RUNNING, limit=RUNNING_BATCH, after=after)
        for entry in batch:
            shown_status = shown(store, entry.listing, now)
            if shown_status != status:
                continue
            if len(rows) == limit:
                return rows, True
            rows.append((entry, shown_status))
        if len(batch) < RUNNING_BATCH:
            return rows, False
        after = batch[-1].key


def _item(store: DebateStore, entry: ListedDebate, status: str) -> dict[str, Any]:
    """The debate's line; one whose log could not be read when its details were filled in is folded
    (and fails as it would have)."""
    if entry.details is None:
        return listing_row(store.load(entry.listing.id), status)
    return summary_row(entry, entry.details, status)


def summary_row(entry: ListedDebate, details: ListingDetails, status: str) -> dict[str, Any]:
    """The line :func:`~dialectic.web.views.listing_row` gives for the folded debate, from what the store keeps."""
    listing = entry.listing
    tokens = details.tokens.totals()
    return {
        "id": listing.id,
        "status": status,
        "problem": cut_line(without_marks(details.first_line), PROBLEM_CHARS),  # also one kept before
        "currentRound": listing.current_round,
        "rounds": details.rounds,
        "format": details.format if details.format is not None else DEFAULT_FORMAT,
        "agents": list(details.agents),
        "createdAt": details.created_at.isoformat(),
        "updatedAt": details.updated_at.isoformat(),
        "tokens": TokenTotals(tokens.input, tokens.output, tokens.total).to_json(),
    }


def encode_cursor(key: PageKey) -> str:
    text = f"{key.created_at.astimezone(UTC).isoformat(timespec='microseconds')}|{key.ordinal}"
    return base64.urlsafe_b64encode(text.encode("ascii")).decode("ascii").rstrip("=")


def decode_cursor(cursor: str) -> PageKey:
    """The place a cursor names; a 400 for anything :func:`encode_cursor` did not write (it must write it back)."""
    key = _parse_cursor(cursor)
    if key is None or encode_cursor(key) != cursor:
        raise ApiError(400, "bad_request", BAD_CURSOR)
    return key


def _parse_cursor(cursor: str) -> PageKey | None:
    if not 0 < len(cursor) <= CURSOR_MAX_CHARS or not cursor.isascii():
        return None
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode("ascii")
        moment, bar, ordinal = text.partition("|")
        created_at = datetime.fromisoformat(moment)
    except ValueError:  # not base64, not ASCII, not a time
        return None
    if not bar or _ORDINAL.fullmatch(ordinal) is None or int(ordinal) > SQLITE_MAX_INT:
        return None
    if created_at.utcoffset() != UTC.utcoffset(None):
        return None
    return PageKey(created_at, int(ordinal))
