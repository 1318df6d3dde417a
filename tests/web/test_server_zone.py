"""The zone ``GET /api/options`` names for the page's times: the one the command line shows them in here.

No browser: what the server finds of its own zone (the browser tests check the page's side).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from dialectic.web.time_zone import local_zone_name, server_time_zone

pytestmark = pytest.mark.skipif(
    not Path("/usr/share/zoneinfo/Europe/Paris").exists() or not hasattr(time, "tzset"),
    reason="needs the system's time zone data and time.tzset",
)
WINTER = datetime(2025, 1, 15, 12, 0, tzinfo=UTC)
SUMMER = datetime(2025, 7, 15, 12, 0, tzinfo=UTC)


@pytest.fixture
def local_zone(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    """Sets ``TZ`` for this process (as the server's environment would), and puts it back."""
    yield monkeypatch
    monkeypatch.undo()
    time.tzset()


def zone_of(local_zone: pytest.MonkeyPatch, tz: str, now: datetime = WINTER) -> dict[str, object]:
    local_zone.setenv("TZ", tz)
    time.tzset()
    return server_time_zone(now)


def test_a_named_zone_is_named_with_its_offset_now(local_zone: pytest.MonkeyPatch) -> None:
    assert zone_of(local_zone, "Europe/Paris") == {"name": "Europe/Paris", "offsetMinutes": 60, "abbreviation": "CET"}
    summer = zone_of(local_zone, "Europe/Paris", SUMMER)
    assert summer == {"name": "Europe/Paris", "offsetMinutes": 120, "abbreviation": "CEST"}


def test_a_path_to_a_zone_file_is_named_by_it(local_zone: pytest.MonkeyPatch) -> None:
    assert zone_of(local_zone, ":/usr/share/zoneinfo/America/Sao_Paulo")["name"] == "America/Sao_Paulo"


def test_an_empty_tz_is_utc(local_zone: pytest.MonkeyPatch) -> None:
    assert zone_of(local_zone, "") == {"name": "UTC", "offsetMinutes": 0, "abbreviation": "UTC"}


@pytest.mark.parametrize("tz", ["CET-1CEST,M3.5.0,M10.5.0/3", "Nowhere/Atlantis", "../../etc/passwd"])
def test_without_a_name_the_offset_is_all_there_is(local_zone: pytest.MonkeyPatch, tz: str) -> None:
    found = zone_of(local_zone, tz)
    assert found["name"] is None
    assert found["offsetMinutes"] == (60 if tz.startswith("CET") else 0)


def test_a_name_that_keeps_another_time_is_not_taken(local_zone: pytest.MonkeyPatch) -> None:
    """``/etc/timezone`` left behind after the zone changed: its name is checked against the local zone."""
    zone_of(local_zone, "Europe/Paris")
    local = WINTER.astimezone()
    assert local_zone_name(local, {"TZ": "Europe/Paris"}) == "Europe/Paris"
    assert local_zone_name(local, {"TZ": "Africa/Lagos"}) is None  # +01:00 in winter too, but no summer time
    assert local_zone_name(local, {"TZ": "Asia/Tokyo"}) is None
