"""What ``dialectic leaderboard`` does: read the completed debates, rate them, print a table or JSON.

The ratings and, beside them, the calibration (the Brier score of the confidences each stated:
:mod:`dialectic.reporting.calibration`) are computed from the store on every run
(:mod:`dialectic.reporting.ratings`); nothing is kept between runs, so every finished debate counts
from the next run on. Like ``dialectic list``, it never creates a store: a ``--store`` that holds
no database reads as empty.
"""

from __future__ import annotations

import json
import os
import sys
from datetime import datetime
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from dialectic.cli.console import Terminal
from dialectic.core.domain import DebateState
from dialectic.core.errors import InvalidArgumentsError
from dialectic.reporting.calibration import Calibration, compute_calibration
from dialectic.reporting.ratings import INITIAL_RATING, K_FACTOR, RATING_KEYS, Leaderboard, RatingKey, compute_ratings
from dialectic.store import open_store, resolve_store

OUTPUT_FORMATS = ("table", "json")
TABLE_WIDTH_WHEN_PIPED = 120


def print_leaderboard(*, by: str, output_format: str, since: str | None, store: str | None) -> None:
    """Check the flags, then rate the completed debates (created at or after ``since``) and print them."""
    key = rating_key(by)
    if output_format not in OUTPUT_FORMATS:
        raise InvalidArgumentsError(f"unknown --format '{output_format}' (known: {', '.join(OUTPUT_FORMATS)})")
    since_moment = parse_since(since) if since is not None else None
    debates, location = completed_debates(store, since_moment)
    board = compute_ratings(debates, key)
    calibration = compute_calibration(debates, key)
    if output_format == "json":
        data = leaderboard_json(board, since_moment, calibration)
        sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    elif not board.entries:
        Terminal().line(nothing_to_rank(board, since_moment, location))
    else:
        _print_table(board, calibration)


def nothing_to_rank(board: Leaderboard, since: datetime | None, location: object) -> str:
    """Why the leaderboard is empty: no judged debates, or judged debates that set no two players against each other."""
    after = f" created since {since.isoformat()}" if since is not None else ""
    if not board.judged:
        return f"No completed debates with a verdict or a vote{after} in {location}"
    if board.by == "model":
        return (
            f"{board.judged} completed debate(s) with a verdict or a vote{after} in {location}, but in each "
            "every participant runs on one model: no two models met. Rank the agents: dialectic leaderboard --by agent"
        )
    return (
        f"{board.judged} completed debate(s) with a verdict or a vote{after} in {location}, "
        "but none named a participant it rated"
    )


def rating_key(by: str) -> RatingKey:
    for known in RATING_KEYS:
        if by == known:
            return known
    raise InvalidArgumentsError(f"unknown --by '{by}' (known: {', '.join(RATING_KEYS)})")


def parse_since(text: str) -> datetime:
    """``--since``: an ISO date (midnight) or date-time; without a zone it is local time."""
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise InvalidArgumentsError(
            f"--since takes an ISO date or date-time, e.g. 2025-01-31 or 2025-01-31T14:30 (got '{text}')"
        ) from None
    return moment if moment.tzinfo is not None else moment.astimezone()


def completed_debates(store: str | None, since: datetime | None) -> tuple[list[DebateState], str]:
    """The completed debates created at or after ``since``, and where the store is (for messages)."""
    debate_store = open_store(resolve_store(store, os.environ), create=False)
    try:
        listings = [d for d in debate_store.list(status="completed") if since is None or d.created_at >= since]
        return [debate_store.load(d.id) for d in listings], debate_store.location
    finally:
        debate_store.close()


def leaderboard_json(
    board: Leaderboard, since: datetime | None, calibration: dict[str, Calibration] | None = None
) -> dict[str, Any]:
    """The leaderboard as JSON: each entry's rating, its uncertainty, and its calibration (``brier``:
    ``None`` when it stated no confidence that an outcome could judge; ``forecasts``: how many it did)."""
    calibration = calibration or {}
    return {
        "by": board.by,
        "since": since.isoformat() if since is not None else None,
        "debates": board.debates,
        "initialRating": INITIAL_RATING,
        "kFactor": K_FACTOR,
        "ratings": [
            {
                "rank": rank,
                "key": entry.key,
                "name": entry.name,
                "rating": round(entry.rating, 1),
                "deviation": round(entry.deviation, 1),
                "matches": entry.matches,
                "wins": entry.wins,
                "draws": entry.draws,
                "losses": entry.losses,
                **_calibration_json(calibration.get(entry.key)),
            }
            for rank, entry in enumerate(board.entries, start=1)
        ],
    }


def _calibration_json(found: Calibration | None) -> dict[str, Any]:
    brier = found.brier if found is not None else None
    return {"brier": round(brier, 4) if brier is not None else None, "forecasts": found.forecasts if found else 0}


def _print_table(board: Leaderboard, calibration: dict[str, Calibration]) -> None:
    table = Table(
        box=box.SIMPLE_HEAD,
        title=f"ELO by {board.by} from {board.debates} debate(s) (start {INITIAL_RATING:.0f}, K {K_FACTOR:.0f})",
        title_justify="left",
        caption="±: the rating's uncertainty; Brier: calibration of the confidences stated (lower is better)",
        caption_justify="left",
    )
    table.add_column("Rank", justify="right")
    table.add_column(board.by.capitalize(), no_wrap=True)
    table.add_column("Rating", justify="right")
    table.add_column("±", justify="right")
    table.add_column("Matches", justify="right")
    table.add_column("W/D/L", justify="right")
    table.add_column("Brier", justify="right")
    table.add_column("Forecasts", justify="right")
    for rank, entry in enumerate(board.entries, start=1):
        name = entry.name if entry.name == entry.key else f"{entry.name} ({entry.key})"
        found = calibration.get(entry.key)
        brier = found.brier if found is not None else None
        table.add_row(
            str(rank),
            Text(name),  # a name is the user's text, not Rich markup
            f"{entry.rating:.0f}",
            f"{entry.deviation:.0f}",
            str(entry.matches),
            f"{entry.wins}/{entry.draws}/{entry.losses}",
            f"{brier:.3f}" if brier is not None else "-",
            str(found.forecasts if found is not None else 0),
        )
    console = Console(highlight=False)
    if not console.is_terminal:
        console.width = max(console.width, TABLE_WIDTH_WHEN_PIPED)
    console.print(table)
