"""llama-server killed mid-debate and started again, twice (issue 52, item 6).

A llama-server of this test's own, on a port it keeps: when round 1's proposals are in, it is killed
(SIGKILL: connections cut, nothing answers); the next call that fails and is retried starts it again
on the same port; once it has answered a few more contributions it is killed and started the same
way once more. The debate waits for it within its retry policy (``debate.retry``) and completes: no
agent dropped, no contribution asked for twice. The kills follow the debate's own events (counts), not
a clock.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from dialectic.core import events as ev
from dialectic.core.config import SystemConfig
from dialectic.engine import DebateEngine, DebateRequest
from dialectic.llm.registry import ProviderPool
from dialectic.store.sqlite import SqliteStore
from tests.servers.conftest import (
    BINARY_ENV,
    READY_DEADLINE_S,
    _die_with_parent,
    debate_config,
    free_port,
    llama_server_binary,
    llama_server_command,
    llama_server_ready,
    unavailable,
)

pytestmark = pytest.mark.servers

SLOT = 2_048
SLOTS = 3
KILL_AFTER = (3, 9)
"""Contributions announced when the server is killed: round 1's proposals, then its critiques (one round of
three agents: 3 proposals, 6 critiques, 3 refinements)."""
RETRY = {"maxAttempts": 12, "baseDelayMs": 250, "maxDelayMs": 3_000, "jitterMs": 50}
"""Up to some 25 s of waiting for one call: a 0.5B model loads in a few seconds, even on a loaded machine."""


class Restartable:
    """A llama-server that can be killed and started again on the same port."""

    def __init__(self, binary: Path, model: Path, log: Path) -> None:
        self.port = free_port()
        self.command = llama_server_command(binary, model, context=SLOT * SLOTS, slots=SLOTS)(self.port)
        self.log = log
        self.process: subprocess.Popen[bytes] | None = None
        self.starts = 0
        self.kills = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> None:
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                self.command,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                # the parent-death signal follows the thread that starts the server: only the main thread's
                # lasts as long as the test (a restart's thread ends at once; the test kills that server itself)
                preexec_fn=_die_with_parent if threading.current_thread() is threading.main_thread() else None,
            )
        deadline = time.monotonic() + READY_DEADLINE_S
        while not llama_server_ready(self.base_url.removesuffix("/v1")):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"llama-server did not get ready; its log ends:\n{self.log.read_text()[-2000:]}")
            try:
                self.process.wait(timeout=0.25)  # the pause between two polls
            except subprocess.TimeoutExpired:
                continue
        self.starts += 1

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
            self.kills += 1

    def down(self) -> bool:
        return self.process is None or self.process.poll() is not None


@pytest.mark.timeout(900)
def test_llama_server_killed_mid_debate_and_started_again_twice_the_debate_waits_and_completes(
    tmp_path: Path, model_file: Path
) -> None:
    binary = llama_server_binary()
    if binary is None or not os.access(binary, os.X_OK):
        unavailable(f"llama.cpp's llama-server is not built (make llama-server, or point ${BINARY_ENV} at one)")
    server = Restartable(binary, model_file, tmp_path / "server.log")
    server.start()
    restarting = threading.Lock()
    restarts: list[threading.Thread] = []
    added = 0

    def watch(event: ev.Event) -> None:
        nonlocal added
        if isinstance(event, ev.ContributionAdded):
            added += 1
            if added in KILL_AFTER:
                server.kill()
        elif isinstance(event, ev.CallRetrying) and server.down() and restarting.acquire(blocking=False):
            # the first retry that finds it down starts it again (in a thread: the debate goes on waiting)
            def restart() -> None:
                try:
                    server.start()
                finally:
                    restarting.release()

            thread = threading.Thread(target=restart, daemon=True)
            restarts.append(thread)
            thread.start()

    bus = ev.EventBus()
    bus.subscribe(watch)
    setup = debate_config(server.base_url, agents=3, rounds=1, max_tokens=16, judge_max_tokens=64, retry=RETRY)
    store = SqliteStore(tmp_path / "debates.sqlite3")
    try:
        engine = DebateEngine(store, ProviderPool(env={"OPENAI_API_KEY": "unused"}), bus)
        request = DebateRequest(
            problem="Design a rate limiter for an API", config=SystemConfig.model_validate(setup), config_dir=tmp_path
        )
        state = asyncio.run(engine.start(request))
        for thread in restarts:
            thread.join()
        saved = store.load(state.id)
    finally:
        store.close()
        server.kill()
    assert (server.kills, server.starts) == (len(KILL_AFTER) + 1, len(KILL_AFTER) + 1), server.log.read_text()[-2000:]
    assert state.status == "completed" and not state.dropped and state.final_solution is not None
    assert saved.status == "completed"
    contributions = [c for r in saved.rounds for c in r.contributions]
    assert all(c.ok for c in contributions)
    keys = [(r.round_number, c.type, c.agent_id, c.target_agent_id) for r in saved.rounds for c in r.contributions]
    assert len(keys) == len(set(keys))  # nothing asked for (and saved) twice
