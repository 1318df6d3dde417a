"""The local provider's timeout measures inactivity: unit tests of its clock, no model needed."""

from __future__ import annotations

from dialectic.llm.base import CompletionRequest, Message
from dialectic.llm.local_provider import GenerationJob, job_for
from dialectic.llm.timeouts import DEFAULT_CALL_TIMEOUT_S


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_job_that_keeps_producing_tokens_never_times_out() -> None:
    clock = Clock()
    job = GenerationJob(2.0, clock=clock)
    job.start(tokens=0)
    for produced in range(1, 301):  # 300 tokens, one every 1.5 s: 450 s in all, far past the 2 s timeout
        clock.now += 1.5
        job.observe(produced)
        assert not job.timed_out
    assert not job.should_stop()


def test_a_job_times_out_once_nothing_happened_for_longer_than_its_timeout() -> None:
    clock = Clock()
    job = GenerationJob(2.0, clock=clock)
    job.start(tokens=40)
    clock.now += 1.9
    job.observe(40)  # the same count: no progress
    assert not job.timed_out
    clock.now += 0.2
    job.observe(40)
    assert job.timed_out and job.should_stop()


def test_the_first_progress_must_come_within_the_timeout_from_the_start() -> None:
    clock = Clock()
    job = GenerationJob(5.0, clock=clock)
    assert not job.timed_out  # not started: loading the model does not count
    clock.now += 60
    job.start(tokens=0)
    clock.now += 5.5
    assert job.timed_out


def test_time_the_process_spent_stopped_is_not_inactivity() -> None:
    clock = Clock()
    job = GenerationJob(120.0, clock=clock)
    job.start(tokens=10)
    for _ in range(300):  # polled every 0.1 s with no progress for 30 s, then the process is stopped
        clock.now += 0.1
        job.observe(10)
    clock.now += 300
    job.observe(10)  # the first observation after it continued: the stopped time is taken off
    assert not job.timed_out
    for _ in range(890):
        clock.now += 0.1
        job.observe(10)
    assert not job.timed_out  # 30 + 89 s of real inactivity so far
    for _ in range(20):
        clock.now += 0.1
        job.observe(10)
    assert job.timed_out


def test_cancellation_stops_a_job_that_is_progressing() -> None:
    job = GenerationJob(5.0, clock=Clock())
    job.start(tokens=0)
    job.cancelled.set()
    assert job.should_stop() and not job.timed_out


def test_a_request_without_a_timeout_gets_the_default() -> None:
    request = CompletionRequest(messages=(Message("user", "hi"),), model="m")
    assert job_for(request).timeout_s == DEFAULT_CALL_TIMEOUT_S
    assert job_for(request.with_changes(timeout_s=9.0)).timeout_s == 9.0
