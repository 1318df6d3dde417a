"""SIGTERM and SIGHUP, in-process: inside the event loop they cancel the running task, outside it they raise."""

from __future__ import annotations

import asyncio
import signal

import pytest

from dialectic.cli.interruptions import Terminated, exit_code_for, signal_name
from dialectic.cli.signals import StopSignals


def test_exit_codes_follow_the_shell_convention() -> None:
    assert (exit_code_for(signal.SIGHUP), exit_code_for(signal.SIGINT), exit_code_for(signal.SIGTERM)) == (
        129,
        130,
        143,
    )
    assert signal_name(signal.SIGTERM) == "SIGTERM"


def test_sigterm_cancels_the_running_call_and_handlers_are_restored() -> None:
    stop = StopSignals()
    before = signal.getsignal(signal.SIGTERM)

    async def waits_forever() -> None:
        asyncio.get_running_loop().call_soon(signal.raise_signal, signal.SIGTERM)
        await asyncio.Event().wait()

    with stop.installed(), pytest.raises(asyncio.CancelledError):
        asyncio.run(stop.run_cancellable(waits_forever))
    assert stop.received == signal.SIGTERM
    assert signal.getsignal(signal.SIGTERM) == before


def test_a_second_signal_does_not_cut_the_saving_short() -> None:
    stop = StopSignals()
    saved: list[str] = []

    async def saves_when_cancelled() -> None:
        asyncio.get_running_loop().call_soon(signal.raise_signal, signal.SIGTERM)
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            signal.raise_signal(signal.SIGHUP)  # arrives while the engine saves the debate
            await asyncio.sleep(0)
            saved.append("interrupted")
            raise

    with stop.installed(), pytest.raises(asyncio.CancelledError):
        asyncio.run(stop.run_cancellable(saves_when_cancelled))
    assert saved == ["interrupted"]
    assert stop.received == signal.SIGTERM


def test_outside_the_event_loop_a_signal_raises_terminated() -> None:
    stop = StopSignals()
    with stop.installed(), pytest.raises(Terminated) as raised:
        signal.raise_signal(signal.SIGHUP)
    assert raised.value.signum == signal.SIGHUP
    assert stop.received == signal.SIGHUP


def test_run_is_the_one_wrapper_a_signal_cancels_into_terminated() -> None:
    """``batch`` and ``bench`` run their work through StopSignals.run: SIGTERM cancels it and says so."""
    stopped: list[str] = []

    async def work() -> None:
        signal.raise_signal(signal.SIGTERM)
        try:
            await asyncio.Event().wait()  # cancelled by the signal, never set
        except asyncio.CancelledError:
            stopped.append("cancelled, saving")
            raise

    signals = StopSignals()
    with signals.installed(), pytest.raises(Terminated):
        signals.run(work())
    assert stopped == ["cancelled, saving"] and signals.received == signal.SIGTERM
    finished: list[int] = []

    async def quiet() -> None:
        finished.append(1)

    StopSignals().run(quiet())
    assert finished == [1]
