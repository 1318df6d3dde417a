"""The console script leaves without the interpreter's teardown, once everything it wrote is out."""

from __future__ import annotations

import io
import logging
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from dialectic.cli import app as cli_app


class Left(Exception):
    """Raised in place of ``os._exit`` so the test can see the code it was given."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


def fake_exit(code: int) -> None:
    raise Left(code)


class FlushRecorder(io.StringIO):
    def __init__(self) -> None:
        super().__init__()
        self.flushes = 0

    def flush(self) -> None:
        self.flushes += 1
        super().flush()


class BrokenPipe(io.StringIO):
    def flush(self) -> None:
        raise BrokenPipeError(32, "Broken pipe")


@pytest.fixture
def no_real_exit(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """``os._exit`` raises :class:`Left`; the returned list records that logging was shut down."""
    calls: list[str] = []
    monkeypatch.setattr(cli_app.os, "_exit", fake_exit)
    monkeypatch.setattr(logging, "shutdown", lambda: calls.append("logging.shutdown"))
    return calls


def test_main_runs_the_command_flushes_and_exits_with_its_code(
    no_real_exit: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out, err = FlushRecorder(), FlushRecorder()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    monkeypatch.setattr(sys, "argv", ["dialectic", "frobnicate"])
    with pytest.raises(Left) as left:
        cli_app.main()
    assert left.value.code == 2
    assert err.getvalue().startswith("error: unknown command")
    assert out.flushes >= 1 and err.flushes >= 1
    assert no_real_exit == ["logging.shutdown"]


def test_a_stream_that_cannot_be_flushed_gets_the_normal_exit(
    no_real_exit: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdout", BrokenPipe())
    with pytest.raises(SystemExit) as exited:
        cli_app.leave(0)
    assert exited.value.code == 0


def test_a_thread_still_working_gets_the_normal_exit(no_real_exit: list[str]) -> None:
    release = threading.Event()
    worker = threading.Thread(target=release.wait, daemon=False)
    worker.start()
    try:
        with pytest.raises(SystemExit) as exited:
            cli_app.leave(3)
        assert exited.value.code == 3
    finally:
        release.set()
        worker.join()
    with pytest.raises(Left) as left:
        cli_app.leave(3)
    assert left.value.code == 3


def test_the_process_skips_teardown_but_keeps_its_output(tmp_path: Path) -> None:
    """An ``atexit`` hook stands for the teardown: it must not run, and the output must all arrive."""
    script = (
        "import atexit, sys\n"
        "atexit.register(lambda: print('teardown ran'))\n"
        "sys.argv = ['dialectic', '--version']\n"
        "from dialectic.cli.app import main\n"
        "main()\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("dialectic ") and result.stdout.endswith("\n")
    assert "teardown ran" not in result.stdout
