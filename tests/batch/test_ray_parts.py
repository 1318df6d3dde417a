"""The Ray batch's parts that need no cluster: the limiter's rules, the environment the workers get, and
``--ray`` without Ray installed (a one-line usage error). These run whether or not Ray is installed."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from dialectic.cluster.connection import RAY_MISSING, forwarded_env
from dialectic.cluster.limits import EndpointLimiter
from dialectic.cluster.workers import ClusterWorker, WorkerClosed
from dialectic.core.config import AgentConfig, DebateSettings
from dialectic.engine.roster import ClientFactory
from dialectic.llm.registry import ProviderPool
from dialectic.llm.retry import RetryPolicy
from tests.batch.ray_support import Place


def test_the_limiter_serves_waiters_in_order_within_its_limit() -> None:
    async def scenario() -> list[str]:
        limiter = EndpointLimiter(2)
        order: list[str] = []
        assert await limiter.acquire("a", "w1") and await limiter.acquire("b", "w1")

        async def wait(ticket: str) -> None:
            if await limiter.acquire(ticket, "w2"):
                order.append(ticket)

        waiters = [asyncio.ensure_future(wait(t)) for t in ("c", "d", "e")]
        await asyncio.sleep(0)
        assert (await limiter.stats())["waiting"] == 3
        await limiter.release("d")  # withdrawn while waiting: never served
        await limiter.release("a")
        await limiter.release("b")
        await asyncio.gather(*waiters)
        stats = await limiter.stats()
        assert stats == {"limit": 2, "held": 2, "waiting": 0, "max_held": 2}
        return order

    assert asyncio.run(scenario()) == ["c", "e"]


def test_a_ticket_withdrawn_before_it_arrives_is_not_served_and_a_dead_holders_slots_come_back() -> None:
    async def scenario() -> None:
        limiter = EndpointLimiter(1)
        await limiter.release("late")
        assert await limiter.acquire("late", "w1") is False
        assert await limiter.acquire("x", "dead")
        waiter = asyncio.ensure_future(limiter.acquire("y", "w2"))
        await asyncio.sleep(0)
        assert await limiter.release_holder("dead") == 1
        assert await waiter is True
        assert (await limiter.stats())["held"] == 1

    asyncio.run(scenario())


def test_closing_a_worker_ends_its_work_after_the_work_saved_itself_and_starts_no_more() -> None:
    async def scenario() -> tuple[int, list[str], bool]:
        worker = ClusterWorker()
        saved: list[str] = []
        started = asyncio.Event()

        async def debate(name: str) -> str:
            try:
                started.set()
                await asyncio.Event().wait()  # a debate under way
            except asyncio.CancelledError:
                await asyncio.sleep(0)  # its interruption is saved (an await of its own)
                saved.append(name)
                raise
            return name

        call = asyncio.ensure_future(worker.working(lambda: debate("d1")))
        await started.wait()
        ended = await worker.close()
        refused = False
        try:
            await worker.working(lambda: debate("d2"))
        except WorkerClosed:
            refused = True
        assert call.cancelled()  # the call that ran it ends with it
        return ended, saved, refused

    assert asyncio.run(scenario()) == (1, ["d1"], True)


def test_the_workers_get_the_provider_keys_and_base_urls() -> None:
    env = {"OPENAI_API_KEY": "k", "LLAMACPP_BASE_URL": "u", "DIALECTIC_HOME": "h", "HOME": "/root", "PATH": "/bin"}
    assert forwarded_env(env) == {"OPENAI_API_KEY": "k", "LLAMACPP_BASE_URL": "u", "DIALECTIC_HOME": "h"}


def test_a_pool_with_shared_limits_hands_them_to_the_clients() -> None:
    class Limit:
        def slot(self) -> asyncio.Semaphore:
            return asyncio.Semaphore(1)

    shared = Limit()
    pool = ProviderPool(shared_limits=lambda endpoint: shared if endpoint.startswith("openai|") else None)
    factory = ClientFactory(pool, DebateSettings(), RetryPolicy())
    openai = AgentConfig(id="a", name="A", role="architect", provider="openai", model="m", base_url="http://x/v1")
    scripted = AgentConfig(id="b", name="B", role="security", provider="scripted", model="m")
    assert factory.client_for(openai)._limiter is shared
    assert isinstance(factory.client_for(scripted)._limiter, asyncio.Semaphore)


def test_ray_not_installed_is_a_one_line_usage_error(tmp_path: Path) -> None:
    blocker = tmp_path / "blocker" / "ray"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text('raise ImportError("no ray here")\n')
    place = Place(tmp_path)
    problems = place.write_problems(2)
    env = place.env() | {"PYTHONPATH": str(blocker.parent)}
    for flags in (["--ray", "auto"], ["--ray", "127.0.0.1:6379"]):
        result = place.run("batch", str(problems), *flags, env=env)
        assert result.returncode == 2, result.stderr
        assert result.stderr == f"error: {RAY_MISSING}\n"
    assert not (place.home / "batch.sqlite3").exists()


@pytest.mark.parametrize("value", ["", " "])
def test_an_empty_address_is_a_usage_error(tmp_path: Path, value: str) -> None:
    place = Place(tmp_path)
    result = place.run("batch", str(place.write_problems(1)), "--ray", value)
    assert result.returncode == 2 and "--ray: give a cluster address" in result.stderr, result.stderr
