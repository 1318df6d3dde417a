"""Leases: which process runs a debate, so that two runners never work on the same one.

A run takes its debate's lease before it writes, renews it on a heartbeat and releases it
when it stops. A lease may be taken over when it was released, when its heartbeat is older
than its time-to-live, or when its owner's process is gone (same host, pid no longer
running); a live lease refuses the newcomer with :class:`DebateBusyError`. The rules here
are pure and shared by both store backends; only :func:`owner_process_gone` and
:func:`process_start` look at the operating system.
"""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from enum import StrEnum
from pathlib import Path

from dialectic.core.errors import DebateBusyError, LeaseLostError

DEFAULT_TTL = timedelta(seconds=30)
"""How long a lease stays live after its last heartbeat."""
STALE = "stale"
"""Shown instead of ``running`` for a debate whose run crashed or was killed (never stored)."""


@dataclass(frozen=True)
class LeaseOwner:
    """One run of one process: who holds a lease."""

    id: str
    """Random per run, so two runs in the same process are two owners."""
    pid: int
    host: str
    started: int | None = None
    """When the process started (clock ticks since boot, Linux only), to tell a reused pid; ``None`` if unknown."""

    @classmethod
    def for_this_run(cls) -> LeaseOwner:
        pid = os.getpid()
        return cls(id=uuid.uuid4().hex, pid=pid, host=socket.gethostname(), started=process_start(pid))

    def describe(self) -> str:
        return f"pid {self.pid} on host {self.host}"


@dataclass(frozen=True)
class Lease:
    """A debate's lease as stored; it stays readable after it is released."""

    debate_id: str
    owner: LeaseOwner
    acquired_at: datetime
    heartbeat_at: datetime
    expires_at: datetime
    released_at: datetime | None = None

    @property
    def ttl(self) -> timedelta:
        return self.expires_at - self.heartbeat_at


class Standing(StrEnum):
    """What a stored lease means now."""

    LIVE = "live"
    RELEASED = "released"
    EXPIRED = "expired"
    """Its heartbeat is older than its time-to-live."""
    OWNER_GONE = "owner gone"
    """Its owner ran on this host and that process no longer exists."""


OwnerGoneCheck = Callable[[LeaseOwner], bool]
"""Whether a lease owner's process is known to be gone (injectable for tests)."""


@dataclass(frozen=True)
class LeaseGrant:
    """A lease just acquired, and the previous owner's lease if it was taken over."""

    lease: Lease
    replaced: Lease | None = None
    """A lease that was still held when it was taken over (expired, or its owner gone)."""
    replaced_standing: Standing | None = None

    def takeover_notice(self) -> str | None:
        """The line that reports a takeover, or ``None`` when nothing was taken from anyone."""
        if self.replaced is None:
            return None
        old = self.replaced
        if self.replaced_standing is Standing.OWNER_GONE:
            why = "that process is gone"
        else:
            age = _seconds(self.lease.acquired_at - old.heartbeat_at)
            why = f"no heartbeat for {age} s (time-to-live {_seconds(old.ttl)} s)"
        return (
            f"took over debate {old.debate_id} from {old.owner.describe()}, which had run it since "
            f"{_local(old.acquired_at)}: {why}; the step it had not saved is redone"
        )


def standing(lease: Lease, now: datetime, owner_gone: OwnerGoneCheck) -> Standing:
    if lease.released_at is not None:
        return Standing.RELEASED
    if now >= lease.expires_at:
        return Standing.EXPIRED
    if owner_gone(lease.owner):
        return Standing.OWNER_GONE
    return Standing.LIVE


def is_stale(status: str, lease: Lease | None, now: datetime, owner_gone: OwnerGoneCheck) -> bool:
    """A debate saved as ``running`` that no live run holds: its process crashed or was killed."""
    if status != "running":
        return False
    return lease is None or standing(lease, now, owner_gone) is not Standing.LIVE


def shown_status(status: str, lease: Lease | None, now: datetime, owner_gone: OwnerGoneCheck) -> str:
    """The status to show a user: ``stale`` for a ``running`` debate that no live run holds, else ``status``."""
    return STALE if is_stale(status, lease, now, owner_gone) else status


def describe_holder(lease: Lease, now: datetime) -> str:
    """Who holds a live lease, for ``show``: pid, host, since when and the last heartbeat."""
    beat = _seconds(now - lease.heartbeat_at)
    return f"{lease.owner.describe()} since {_local(lease.acquired_at)}, last heartbeat {beat} s ago"


def is_held_by(lease: Lease | None, owner_id: str) -> bool:
    return lease is not None and lease.released_at is None and lease.owner.id == owner_id


def grant_lease(
    debate_id: str,
    current: Lease | None,
    owner: LeaseOwner,
    *,
    now: datetime,
    ttl: timedelta,
    owner_gone: OwnerGoneCheck,
) -> LeaseGrant:
    """Decide an acquisition against the stored lease: the grant, or :class:`DebateBusyError`."""
    fresh = Lease(debate_id=debate_id, owner=owner, acquired_at=now, heartbeat_at=now, expires_at=now + ttl)
    if current is None or current.owner.id == owner.id:
        return LeaseGrant(fresh)
    now_standing = standing(current, now, owner_gone)
    if now_standing is Standing.LIVE:
        raise busy_error(current, now)
    if now_standing is Standing.RELEASED:
        return LeaseGrant(fresh)
    return LeaseGrant(fresh, replaced=current, replaced_standing=now_standing)


def renewed(lease: Lease, now: datetime) -> Lease:
    """The lease after a heartbeat at ``now``, with the same time-to-live."""
    return replace(lease, heartbeat_at=now, expires_at=now + lease.ttl)


def busy_error(lease: Lease, now: datetime) -> DebateBusyError:
    return DebateBusyError(
        f"debate {lease.debate_id} is being run by {describe_holder(lease, now)}; "
        "wait for it to finish, or stop that process and resume the debate"
    )


def lost_error(debate_id: str, current: Lease | None) -> LeaseLostError:
    taker = f"{current.owner.describe()} took it over" if current is not None and current.released_at is None else ""
    why = taker or "it was released"
    return LeaseLostError(
        f"this run lost the lease of debate {debate_id} ({why}); it stopped without saving anything more"
    )


def owner_process_gone(owner: LeaseOwner) -> bool:
    """True when ``owner`` ran on this host and its process no longer exists.

    A pid that exists again but started at another time (a reused pid), or a zombie, counts as
    gone. On another host, or where processes cannot be probed safely (Windows, where signal 0
    is not a probe), nothing is known and only the heartbeat's expiry frees the lease.
    """
    if owner.host != socket.gethostname() or os.name == "nt" or owner.pid <= 0:
        return False
    try:
        os.kill(owner.pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        pass  # the process exists but belongs to another user
    except OSError:
        return False
    stat = _proc_stat(owner.pid)
    if stat is None:
        return False
    if stat[0] == "Z":
        return True
    return owner.started is not None and int(stat[19]) != owner.started


def process_start(pid: int) -> int | None:
    """When ``pid`` started, in clock ticks since boot (from ``/proc``); ``None`` where that is unknown."""
    stat = _proc_stat(pid)
    return int(stat[19]) if stat is not None else None


def _proc_stat(pid: int) -> list[str] | None:
    """The fields of ``/proc/PID/stat`` after the command name: state first, start time at index 19."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    fields = text[text.rfind(")") + 1 :].split()
    return fields if len(fields) > 19 and fields[19].isdigit() else None


def _seconds(delta: timedelta) -> int:
    return max(0, round(delta.total_seconds()))


def _local(moment: datetime) -> str:
    return moment.astimezone().strftime("%Y-%m-%d %H:%M:%S %Z").strip()
