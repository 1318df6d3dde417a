"""One bench call and the reply it becomes: the request every arm sends, and how its answer is read.

All calls go through :class:`~dialectic.llm.client.LLMClient`, so retries and the marking of cut-off
replies are the same in every arm. A call that fails for this item only (see :mod:`.failures`) becomes
a failed reply; an error that would fail every item propagates and stops the run.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Iterable, Sequence
from typing import TypeVar

from dialectic.bench.environment import ArmEnv
from dialectic.bench.failures import fails_only_the_item, failure_note
from dialectic.bench.metering import Meter, MeteredProvider
from dialectic.bench.records import Reply
from dialectic.bench.tasks import Item
from dialectic.bench.templates import render
from dialectic.core.config import AgentConfig
from dialectic.core.errors import ProviderError
from dialectic.engine.adaptive import confidence, mean_logprob
from dialectic.llm.base import CompletionRequest, Message, TokenLogprob
from dialectic.llm.call_cache import cache_key
from dialectic.llm.client import LLMClient

T = TypeVar("T")

GREEDY_TEMPERATURE = 0.0
ANSWER_INSTRUCTIONS = {
    "boxed": "End with your final answer, written inside \\boxed{}.",
    "tagged": "End with your final answer, and only the answer, inside <answer></answer> tags.",
}
"""How a protocol's later steps ask for the answer, in the form the item's own question asks for it."""


async def gather_or_cancel(awaitables: Iterable[Awaitable[T]]) -> list[T]:
    """Await all; on the first failure cancel the rest and raise that failure itself."""
    tasks = [asyncio.ensure_future(a) for a in awaitables]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


def question_text(item: Item) -> str:
    """The item as every arm asks it: the question and how to give the answer."""
    return render("answer_tagged" if item.form == "tagged" else "answer", question=item.question)


def first_turn(item: Item) -> tuple[Message, ...]:
    return (Message("user", question_text(item)),)


def answer_instruction(item: Item) -> str:
    return ANSWER_INSTRUCTIONS[item.form]


def panel_member(env: ArmEnv, k: int) -> tuple[AgentConfig, float]:
    """Answer ``k``'s agent and temperature: the run's temperature with one agent; each agent's own in a panel."""
    agent = env.agents[k % len(env.agents)]
    return agent, (env.temperature if len(env.agents) == 1 else agent.temperature)


def failed_reply(who: str, error: str) -> Reply:
    return Reply(who=who, text="", answer=None, method="none", error=error)


async def ask(
    env: ArmEnv,
    meter: Meter,
    item: Item,
    agent: AgentConfig,
    messages: tuple[Message, ...],
    temperature: float,
    arm: str,
    who: str,
    draw: int | None = None,
    *,
    round_number: int | None = None,
) -> Reply:
    """One reply. Its tag, ``bench/<arm>/<item id>/<who>[/round-<r>]``, says what the call is for.

    A ``draw`` index makes the reply a shared sample (:mod:`dialectic.bench.draws`): the ``draw``-th
    reply to this very request in the run, asked once whichever arm needs it first.
    """
    tag = f"bench/{arm}/{item.id}/{who}" + (f"/round-{round_number}" if round_number else "")
    request = CompletionRequest(
        messages=messages,
        model=agent.model,
        temperature=temperature,
        max_tokens=env.max_tokens or agent.max_tokens,
        timeout_s=agent.timeout / 1000 if agent.timeout else None,
        tag=tag,
        logprobs=True,
    )
    endpoint = env.pool.key_for(agent)
    # a limit shared with other processes when there is one (``bench --ray``); locally only --concurrency bounds
    limiter = env.pool.shared_limit(endpoint)
    client = LLMClient(MeteredProvider(env.pool.get(agent), meter), retry=env.retry, limiter=limiter)
    try:
        if env.draws is None or draw is None:
            completion = await client.complete(request)
        else:
            key = cache_key(request, provider=agent.provider, endpoint=endpoint, draw=draw)
            completion, shared = await env.draws.draw(key, lambda: client.complete(request))
            if shared:
                meter.add(completion)  # the arm's cost is what it would pay alone
    except ProviderError as exc:
        if not fails_only_the_item(exc):
            raise
        return failed_reply(who, failure_note(exc))
    return read_reply(item, who, completion.text, completion.finish_reason, completion.truncated, completion.logprobs)


def read_reply(
    item: Item,
    who: str,
    text: str,
    finish_reason: str | None,
    truncated: bool,
    logprobs: Sequence[TokenLogprob] = (),
) -> Reply:
    """A reply with its answer read the item's way, its confidence, and its score where the task has a scorer."""
    extraction = item.extract(text, truncated=truncated)
    return Reply(
        who=who,
        text=text,
        answer=extraction.answer,
        method=extraction.method,
        finish_reason=finish_reason,
        truncated=truncated,
        confidence=confidence(text, logprobs),
        trace_logprob=mean_logprob(logprobs),
        score=item.score(extraction.answer) if item.scorer is not None else None,
    )
