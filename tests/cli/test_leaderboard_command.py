"""The leaderboard's declaration is light: building the app loads neither the ratings nor the view."""

from __future__ import annotations

import subprocess
import sys

from dialectic.cli.leaderboard_run import parse_since


def test_declaring_the_command_imports_no_implementation() -> None:
    probe = (
        "import sys, dialectic.cli.leaderboard_command; "
        "print(sorted(m for m in ('dialectic.reporting.ratings', 'dialectic.cli.leaderboard_run', 'rich.table') "
        "if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_since_without_a_zone_is_local_time() -> None:
    moment = parse_since("2025-01-31")
    assert moment.tzinfo is not None
    assert (moment.year, moment.month, moment.day, moment.hour, moment.minute) == (2025, 1, 31, 0, 0)
    assert moment.utcoffset() == moment.astimezone().utcoffset()
    assert parse_since("2025-01-31T14:30Z").isoformat() == "2025-01-31T14:30:00+00:00"
