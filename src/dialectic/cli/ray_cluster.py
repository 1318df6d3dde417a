"""``--ray ADDRESS|auto`` of ``dialectic batch`` and ``dialectic bench``: the command joined to the cluster.

Imports Ray (through :mod:`dialectic.cluster.connection`) only when the flag is given.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager, redirect_stdout


def check_ray_address(address: str) -> None:
    """``--ray``'s address checked before anything is created: without the extra, a one-line usage error;
    an address where nothing answers (``auto`` aside), one line too."""
    from dialectic.cluster.connection import check_address, probe

    check_address(address)
    if address != "auto":
        probe(address)


@contextmanager
def joined_cluster(address: str, note: Callable[[str], None]) -> Iterator[str]:
    """Join the cluster at ``address`` (``note`` says where), and leave it on the way out; the address joined.

    Join before the command installs its signal handlers: Ray sets its own. While joined, what Ray prints
    (a worker that died, from a thread of its own, to ``sys.stdout``) goes to stderr, so that stdout keeps
    only the command's own output."""
    from dialectic.cluster.connection import connect, disconnect

    try:
        with redirect_stdout(sys.stderr):
            joined = connect(address)
            note(f"ray: joined the cluster at {joined}")
            yield joined
    finally:
        with redirect_stdout(sys.stderr):
            disconnect()
