"""Post-debate hooks: a signed JSON POST to each webhook, and a command, when a debate finishes.

A debate *finishes* when it is saved as ``completed``, ``failed`` or ``interrupted`` (a suspended
or paused debate waits to go on: no hook yet). The hooks run after the debate's state is saved,
each in a daemon thread, and never change the debate: its outcome, its exit code and its saved
state are the same whatever the receiver does. A failure is one warning line (on stderr by
default), never an error.

A webhook gets ``POST`` with the JSON of :func:`hook_payload`, the headers ``X-Dialectic-Event``,
``X-Dialectic-Timestamp`` (Unix seconds) and, when the secret's environment variable is set,
``X-Dialectic-Signature: sha256=<hex>``: the HMAC-SHA256 of the raw body with the secret. It is
retried with exponential back-off on a connection error, a timeout, 429 and 5xx, within
``hooks.waitMs`` for all its attempts. The command (``hooks.onCompleteCommand``, ``--on-complete``)
is split like a shell line but run without a shell; it learns the debate from its environment
(``DIALECTIC_DEBATE_ID``, ``DIALECTIC_STATUS``, ``DIALECTIC_EXPORT``, ``DIALECTIC_REPORT``) and is
stopped after ``hooks.commandTimeoutMs``, with every process it started (it runs in a process group of its own).

A process waits for its hooks at exit, for at most their own bounds (:func:`wait_pending`, called
at interpreter exit and by the CLI before it leaves), so a dead receiver costs seconds, not a hang.
"""

from __future__ import annotations

import atexit
import hashlib
import hmac
import json
import logging
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from dialectic.core.config import HookSettings, WebhookTarget
from dialectic.core.domain import DebateState
from dialectic.core.ledger import debate_totals
from dialectic.core.redaction import redact

FINISHED = ("completed", "failed", "interrupted")
"""The statuses a debate's hooks run for."""
SIGNATURE_HEADER = "X-Dialectic-Signature"
TIMESTAMP_HEADER = "X-Dialectic-Timestamp"
EVENT_HEADER = "X-Dialectic-Event"
EVENT = "debate.finished"
SUMMARY_CHARS = 500
"""Characters of the solution the payload carries (the whole debate is in the export)."""
GRACE_S = 0.5
"""Extra time a wait gives a hook past its own bound (a timeout firing, a thread ending)."""

Warn = Callable[[str], None]


def stderr_warning(message: str) -> None:
    """One line on stderr: how a hook's failure is told by default."""
    try:
        sys.stderr.write(f"warning: {redact(' '.join(message.split()))}\n")
        sys.stderr.flush()
    except (OSError, ValueError):  # stderr closed: there is no one to tell
        return


def log_warning(message: str) -> None:
    """A hook's failure as a warning of the ``dialectic.hooks`` logger (for the Python API and the server)."""
    logging.getLogger("dialectic.hooks").warning("%s", redact(" ".join(message.split())))


def hook_payload(state: DebateState, links: Mapping[str, str] | None = None) -> dict[str, Any]:
    """What a webhook is sent about a finished debate: small, with links to the rest."""
    solution = state.final_solution
    summary = None
    if solution is not None and solution.description:
        text = solution.description.strip()
        summary = text if len(text) <= SUMMARY_CHARS else text[: SUMMARY_CHARS - 1].rstrip() + "…"
    return {
        "event": EVENT,
        "debateId": state.id,
        "status": state.status,
        "problem": state.problem,
        "solutionSummary": summary,
        "verdict": state.verdict.to_json_dict() if state.verdict is not None else None,
        "error": redact(state.error) if state.error else None,
        "usage": debate_totals(state).to_json_dict(),
        "links": dict(links or {}),
        "finishedAt": state.updated_at.isoformat(),
    }


def signature(body: bytes, secret: str) -> str:
    """``sha256=<hex>``: the HMAC-SHA256 of ``body`` with ``secret``, as the signature header carries it."""
    return "sha256=" + hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()


def verify_signature(body: bytes, secret: str, header: str | None) -> bool:
    """Whether ``header`` is the signature of ``body`` with ``secret`` (constant-time; for receivers and tests)."""
    return header is not None and hmac.compare_digest(signature(body, secret), header)


def signed_headers(body: bytes, secret: str | None, *, now: float | None = None) -> dict[str, str]:
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "dialectic-hooks",
        EVENT_HEADER: EVENT,
        TIMESTAMP_HEADER: str(int(time.time() if now is None else now)),
    }
    if secret:
        headers[SIGNATURE_HEADER] = signature(body, secret)
    return headers


def _retryable(status: int) -> bool:
    return status == 429 or status >= 500


def deliver(
    target: WebhookTarget,
    body: bytes,
    settings: HookSettings,
    *,
    secret: str | None = None,
    client: Any = None,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> str | None:
    """POST ``body`` to ``target`` until it is taken (2xx), refused for good (another 4xx), or the attempts
    or ``settings.waitMs`` run out; ``None`` when delivered, else why not (one line)."""
    import httpx2  # only a debate with webhooks loads it

    deadline = clock() + settings.wait_ms / 1000
    own = client is None
    http = client if client is not None else httpx2.Client(follow_redirects=False)
    problem = "no time left to try"
    made = 0
    try:
        for attempt in range(settings.max_attempts):
            left = deadline - clock()
            if left <= 0:
                break
            made += 1
            try:
                response = http.post(
                    target.url, content=body, headers=signed_headers(body, secret), timeout=httpx2.Timeout(left)
                )
            except httpx2.HTTPError as exc:
                problem = f"{type(exc).__name__}: {exc}".rstrip(": ")
            else:
                if 200 <= response.status_code < 300:
                    return None
                problem = f"HTTP {response.status_code}"
                if not _retryable(response.status_code):
                    return problem
            if attempt + 1 < settings.max_attempts:
                pause = settings.backoff_ms / 1000 * 2**attempt
                if clock() + pause >= deadline:
                    break
                sleep(pause)
        return f"{problem} after {made} attempt(s)"
    finally:
        if own:
            http.close()


def command_environment(state: DebateState, links: Mapping[str, str]) -> dict[str, str]:
    return {
        **os.environ,
        "DIALECTIC_DEBATE_ID": state.id,
        "DIALECTIC_STATUS": state.status,
        "DIALECTIC_EXPORT": links.get("export", ""),
        "DIALECTIC_REPORT": links.get("report", ""),
    }


def run_command(command: str, env: Mapping[str, str], timeout_s: float) -> str | None:
    """Run ``command`` (split like a shell line, run without a shell); ``None`` when it exits 0, else why not.

    The command runs in a process group of its own: past ``timeout_s`` the whole group is stopped
    (:func:`finish_command`), so a ``sh -c 'sleep 120; ...'`` leaves no ``sleep`` behind."""
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        return f"cannot split the command: {exc}"
    if not argv:
        return "the command is empty"
    try:
        process = start_command(argv, env)
    except OSError as exc:
        return exc.strerror or str(exc)
    return finish_command(process, timeout_s)


def start_command(argv: list[str], env: Mapping[str, str]) -> subprocess.Popen[bytes]:
    """``argv`` started as the leader of a new session (and so of a new process group), stdin and stdout closed."""
    return subprocess.Popen(
        argv,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )


def finish_command(process: subprocess.Popen[bytes], timeout_s: float) -> str | None:
    """Wait for ``process`` (from :func:`start_command`) at most ``timeout_s``; past it, stop its whole group."""
    try:
        _, stderr = process.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        stop_group(process)
        return f"it ran past its {timeout_s:g}s limit and was stopped"
    if process.returncode != 0:
        last = (stderr or b"").decode("utf-8", "replace").strip().splitlines()
        return f"exit code {process.returncode}" + (f": {last[-1][:200]}" if last else "")
    return None


def stop_group(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL every process of ``process``'s group (its children and theirs), then reap ``process``."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:  # the group is gone already
        pass
    process.wait()
    if process.stderr is not None:
        process.stderr.close()


@dataclass
class HookRun:
    """The hooks of one finished debate, running: :meth:`wait` for them (bounded)."""

    threads: list[tuple[threading.Thread, float]] = field(default_factory=list)
    """Each thread, with the monotonic time after which it is no longer waited for."""

    def wait(self) -> None:
        for thread, until in self.threads:
            thread.join(max(0.0, until - time.monotonic()))

    @property
    def done(self) -> bool:
        return not any(thread.is_alive() for thread, _ in self.threads)


_pending: list[HookRun] = []
_pending_lock = threading.Lock()


def fire(
    settings: HookSettings,
    state: DebateState,
    *,
    links: Mapping[str, str] | None = None,
    warn: Warn = stderr_warning,
    client: Any = None,
) -> HookRun | None:
    """Start the hooks ``settings`` holds for ``state`` (a saved debate), each in a daemon thread.

    Nothing happens for a debate that has not finished or when no hook is set. Never raises."""
    if state.status not in FINISHED or not settings.active:
        return None
    links = dict(links or {})
    run = HookRun()
    try:
        body = json.dumps(hook_payload(state, links), ensure_ascii=False).encode("utf-8")
        for target in settings.on_complete:
            run.threads.append(_started(_webhook_job(target, body, settings, state.id, warn, client), settings.wait_ms))
        if settings.on_complete_command is not None:
            job = _command_job(settings.on_complete_command, command_environment(state, links), settings, warn)
            run.threads.append(_started(job, settings.command_timeout_ms))
    except Exception as exc:  # a hook never costs the debate anything, even a bug here
        warn(f"debate {state.id}: hooks not run: {exc}")
    with _pending_lock:
        _pending[:] = [r for r in _pending if not r.done]
        _pending.append(run)
    return run


def _started(job: Callable[[], None], bound_ms: int) -> tuple[threading.Thread, float]:
    thread = threading.Thread(target=job, name="dialectic-hook", daemon=True)
    thread.start()
    return thread, time.monotonic() + bound_ms / 1000 + GRACE_S


def _webhook_job(
    target: WebhookTarget, body: bytes, settings: HookSettings, debate_id: str, warn: Warn, client: Any
) -> Callable[[], None]:
    def job() -> None:
        secret = os.environ.get(target.secret_env) or None
        try:
            problem = deliver(target, body, settings, secret=secret, client=client)
        except Exception as exc:
            problem = f"{type(exc).__name__}: {exc}"
        if problem is not None:
            warn(f"debate {debate_id}: webhook {_shown(target.url)} not delivered: {problem}")

    return job


def _command_job(command: str, env: Mapping[str, str], settings: HookSettings, warn: Warn) -> Callable[[], None]:
    def job() -> None:
        try:
            problem = run_command(command, env, settings.command_timeout_ms / 1000)
        except Exception as exc:
            problem = f"{type(exc).__name__}: {exc}"
        if problem is not None:
            warn(f"debate {env.get('DIALECTIC_DEBATE_ID', '')}: the on-complete command failed: {problem}")

    return job


def _shown(url: str) -> str:
    """``url`` without its query and any credentials, for a warning."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}"


def wait_pending() -> None:
    """Wait for every hook started in this process, each for at most its own bound: called at exit."""
    with _pending_lock:
        runs = list(_pending)
        _pending.clear()
    for run in runs:
        run.wait()


atexit.register(wait_pending)
