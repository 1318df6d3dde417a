"""The zone the page shows times in: the one the command line uses on the server's machine."""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from dialectic.core.domain import utc_now


def server_time_zone(now: datetime | None = None) -> dict[str, Any]:
    """The zone the command line shows times in on this machine (its local zone: ``show`` and ``list``
    write ``moment.astimezone()``), so that the page shows a debate's times as they do here.

    ``name`` is the zone's IANA name when one is found that keeps the same time as the local zone
    (``None`` otherwise); ``offsetMinutes`` and ``abbreviation`` are the local zone's now (a page
    without the name falls back on that offset, which is right until the clocks change)."""
    local = (now or utc_now()).astimezone()
    offset = local.utcoffset() or timedelta(0)
    return {
        "name": local_zone_name(local),
        "offsetMinutes": round(offset.total_seconds() / 60),
        "abbreviation": local.tzname(),
    }


ZONEINFO_MARK = "zoneinfo/"
SIX_MONTHS = timedelta(days=182)


def local_zone_name(local: datetime, environ: Mapping[str, str] | None = None) -> str | None:
    """The IANA name of this machine's local zone, from ``TZ``, the ``/etc/localtime`` link or
    ``/etc/timezone``: the first that names a zone keeping the local zone's time, now and six months
    apart (so across a change of the clocks too); ``None`` when none does."""
    env = os.environ if environ is None else environ
    for candidate in _zone_candidates(env.get("TZ")):
        try:
            zone = ZoneInfo(candidate)
        except (ValueError, OSError, ZoneInfoNotFoundError):  # a POSIX rule, not a name; or no such zone
            continue
        if all(moment.astimezone(zone).utcoffset() == moment.utcoffset() for moment in _moments(local)):
            return candidate
    return None


def _moments(local: datetime) -> list[datetime]:
    return [local, (local - SIX_MONTHS).astimezone(), (local + SIX_MONTHS).astimezone()]


def _zone_candidates(tz: str | None) -> list[str]:
    if tz is not None:
        spec = tz.removeprefix(":")
        if not spec:
            return ["UTC"]
        if not spec.startswith("/"):
            return [spec]
        return [name] if (name := _zone_from_path(Path(spec))) else []
    names = [_zone_from_path(Path("/etc/localtime"))]
    try:
        names.append(Path("/etc/timezone").read_text(encoding="utf-8").strip())
    except (OSError, UnicodeDecodeError):
        pass
    return [n for n in names if n]


def _zone_from_path(path: Path) -> str | None:
    """``Europe/Paris`` for a path that is, or links to, ``…/zoneinfo/Europe/Paris``."""
    try:
        target = str(path.resolve())
    except OSError:
        return None
    mark = target.rfind(ZONEINFO_MARK)
    return target[mark + len(ZONEINFO_MARK) :].removeprefix("posix/") if mark >= 0 else None
