"""How a stopped command ends: the exit status a signal gives, and the exceptions that carry it.

The exit status follows the shell's convention, 128 + the signal number: 130 for Ctrl-C,
129 for SIGHUP, 143 for SIGTERM. These live apart from the signal handlers
(:mod:`dialectic.cli.signals`) and the engine session (:mod:`dialectic.cli.session`) so that
the error boundary in :mod:`dialectic.cli.app` can catch them without loading either: a
command imports only what it uses.
"""

from __future__ import annotations

import signal

EXIT_INTERRUPTED = 128 + signal.SIGINT


def exit_code_for(signum: int) -> int:
    """The shell's exit status for a process stopped by ``signum``."""
    return 128 + signum


def signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


class Terminated(BaseException):
    """SIGTERM or SIGHUP arrived while no engine task was running.

    A ``BaseException``, like ``KeyboardInterrupt``, so that no ``except Exception`` on the
    way up swallows the request to stop.
    """

    def __init__(self, signum: int) -> None:
        super().__init__(signal_name(signum))
        self.signum = signum


class InterruptedRun(Exception):
    """Ctrl-C, SIGTERM or SIGHUP stopped the command; the message says what was saved and how to continue."""

    def __init__(self, message: str, exit_code: int = EXIT_INTERRUPTED) -> None:
        super().__init__(message)
        self.exit_code = exit_code
