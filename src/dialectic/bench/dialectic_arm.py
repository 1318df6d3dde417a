"""The ``dialectic`` arm: our own propose → critique → refine → judge flow, on a benchmark question.

Each item is one debate run by :class:`~dialectic.engine.DebateEngine` with an in-memory
store and the run's configuration (clarifications off: nobody is there to answer). The
answer is taken from the judge's solution; the item's calls and tokens are the debate's
ledger's. The agents' answers are recorded too, so belief dynamics can be read across
stages: round 1 proposals, then each round's refinements. When the
debate fails for this item only (a call that kept failing, a round past ``timeoutPerRound``, a
request refused as such: see :mod:`.failures`) the item is recorded as failed, with the stages
the debate had saved, and the run goes on.
"""

from __future__ import annotations

from dialectic.bench.asking import question_text, read_reply
from dialectic.bench.environment import ArmEnv
from dialectic.bench.failures import fails_only_the_item, failure_note
from dialectic.bench.metering import Meter
from dialectic.bench.records import Reply
from dialectic.bench.tasks import Item
from dialectic.core.config import min_rounds
from dialectic.core.domain import TURN_KINDS, Contribution, DebateState, Solution
from dialectic.core.errors import ProviderError
from dialectic.core.events import EventBus
from dialectic.engine import DebateEngine, DebateRequest
from dialectic.store import MemoryStore

JUDGE = "judge"


async def run_dialectic(
    item: Item, env: ArmEnv, meter: Meter, *, protocol: str | None = None
) -> tuple[list[str], list[list[Reply]], Reply]:
    """Stages, the agents' replies per stage, and the judge's reply (which decides).

    ``protocol`` runs another deliberation format than the configuration's; the verdict is
    off in every arm (it does not change the answer, only the cost). The prompts are the reasoning
    kind's unless the configuration names a kind: detection reads the wording, and a bench item is
    a question with one right answer whatever its wording.
    """
    update: dict[str, object] = {"interactive_clarifications": False, "verdict": "off"}
    if env.dialectic_config.debate.problem_kind == "auto":
        update["problem_kind"] = "reasoning"  # a bench item has one right answer, whatever its wording
    if protocol is None and env.dialectic_config.debate.format == "auto":
        protocol = "critique-refine"  # the dialectic arm is the critique-refine flow; format:adaptive is its own arm
    if protocol is not None:
        update["format"] = protocol
        update["rounds"] = max(env.dialectic_config.debate.rounds, min_rounds(protocol))
    settings = env.dialectic_config.debate.model_copy(update=update)
    config = env.dialectic_config.model_copy(update={"debate": settings})
    store = MemoryStore()
    try:
        engine = DebateEngine(store, env.pool, EventBus(), retry=env.retry)
        request = DebateRequest(problem=question_text(item), config=config, config_dir=env.config_dir)
        try:
            state = await engine.start(request)
        except ProviderError as exc:
            if not fails_only_the_item(exc):
                raise
            failed = Reply(who=JUDGE, text="", answer=None, method="none", error=failure_note(exc))
            if exc.debate_id is None:
                return [], [], failed
            saved = store.load(exc.debate_id)
            meter.add_ledger(saved.ledger)
            return (*_agent_stages(saved, item), failed)
        meter.add_ledger(state.ledger)
    finally:
        store.close()
    stages, rounds = _agent_stages(state, item)
    return stages, rounds, _judge_reply(state, item)


def _agent_stages(state: DebateState, item: Item) -> tuple[list[str], list[list[Reply]]]:
    agent_ids = [a.id for a in state.agents]
    stages: list[str] = []
    rounds: list[list[Reply]] = []
    for rnd in state.rounds:
        kinds: tuple[str, ...] = ("proposal", "refinement") if rnd.round_number == 1 else ("refinement",)
        if any(c.type in TURN_KINDS for c in rnd.contributions):
            kinds = TURN_KINDS
        for kind in kinds:
            found = {c.agent_id: c for c in rnd.contributions if c.type == kind and c.target_agent_id is None}
            if not found:
                continue
            stages.append(f"round {rnd.round_number} {kind}s")
            rounds.append([_contribution_reply(agent_id, found.get(agent_id), item) for agent_id in agent_ids])
    return stages, rounds


def _contribution_reply(agent_id: str, contribution: Contribution | None, item: Item) -> Reply:
    if contribution is None:
        return Reply(who=agent_id, text="", answer=None, method="none", error="no contribution in this stage")
    meta = contribution.metadata
    if not contribution.ok:
        return Reply(
            who=agent_id,
            text=contribution.content,
            answer=None,
            method="none",
            finish_reason=meta.finish_reason,
            truncated=meta.truncated,
            error=contribution.error,
        )
    return read_reply(item, agent_id, contribution.content, meta.finish_reason, meta.truncated)


def _judge_reply(state: DebateState, item: Item) -> Reply:
    solution: Solution | None = state.final_solution
    if solution is None:
        return Reply(who=JUDGE, text="", answer=None, method="none", error=f"the debate ended {state.status}")
    text = solution.description + (f"\n\n{solution.implementation}" if solution.implementation else "")
    reply = read_reply(item, JUDGE, text, solution.metadata.finish_reason, solution.metadata.truncated)
    stated = solution.confidence / 100 if solution.structured else None
    return reply.model_copy(update={"stated": stated})
