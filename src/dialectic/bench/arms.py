"""The arms: how each one turns a question into a final answer.

* ``single`` — one greedy answer (temperature 0);
* ``majority:K`` — K samples at the sampling temperature, majority vote;
* ``self-consistency`` — as many samples as the debate arm makes calls, majority vote;
* ``debate:AxR`` — the simultaneous-talk protocol of Du et al. (2023): in round 1 each of A
  agents answers; in every later round each agent sees the others' previous replies and
  updates its own; the final answer is the majority of the last round;
* ``adaptive[:M]`` — the adaptive answer protocol (:mod:`dialectic.engine.adaptive`): blind
  answers, the first greedy, drawn until the leading answer cannot lose within M (default 5) or
  holds 80% of them (2 of 2 stops); one anonymised, correction-biased exchange only when they stay
  split between two answers each given twice or more; the final answer by a vote over every
  answer, weighted by the answer tokens' probability. With a
  configuration of several agents (``-c``), answer ``k`` comes from agent ``k`` (cycling), each at
  its own temperature: a heterogeneous panel;
  ``adaptive:M:beta`` and ``adaptive:M:esc`` stop drawing by Adaptive-Consistency's Beta rule or
  ESC's window rule instead (:data:`dialectic.engine.adaptive.STOP_RULES`);
* ``best-of:N``, ``council[:N]``, ``correction[:N]``, ``confident:N`` — pick among independent
  answers, or correct them (see :mod:`.selection`);
* ``dialectic`` — our propose → critique → refine → judge flow (see :mod:`.dialectic_arm`);
* ``format:NAME`` — the same engine running another deliberation protocol (``free-form``,
  ``round-limited``, ``structured``, ``convergence-seeking``, ``simultaneous``, ``vote``),
  with the run's dialectic configuration otherwise unchanged.

Every call is made by :func:`.asking.ask`: a call that fails for this item only (retries exhausted,
a timeout, a request refused as such, e.g. a debate prompt grown past the context window: see
:mod:`.failures`) becomes a failed reply, counted in the report, and the arm goes on with the other
replies; an error that would fail every item alike stops the run. An item's score is its task's:
for a task that brings a scorer (reasoning-gym), the scorer's 0–1, where 1 is correct.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Literal, cast

from dialectic.agents.deliberation import EXCHANGE_TEMPLATE
from dialectic.agents.templates import render as render_agents
from dialectic.bench.asking import (
    GREEDY_TEMPERATURE,
    ask,
    first_turn,
    gather_or_cancel,
    panel_member,
)
from dialectic.bench.dialectic_arm import run_dialectic
from dialectic.bench.environment import ArmEnv
from dialectic.bench.metering import Meter
from dialectic.bench.records import ItemResult, Outcome, Reply
from dialectic.bench.selection import Picked, best_of, confident, correction, council
from dialectic.bench.tasks import Item
from dialectic.bench.templates import render
from dialectic.bench.vote import Vote, majority_vote
from dialectic.core.config import FORMATS
from dialectic.core.errors import InvalidArgumentsError
from dialectic.engine.adaptive import (
    STOP_RULES,
    AdaptivePlan,
    Ballot,
    StopRule,
    exchange_options,
    is_contested,
    sampling_done,
    weighted_vote,
)
from dialectic.engine.council import CouncilPlan
from dialectic.llm.base import Message

__all__ = ["GREEDY_TEMPERATURE", "ArmEnv", "ArmSpec", "gather_or_cancel", "parse_arms", "run_arm"]

ArmKind = Literal[
    "single",
    "majority",
    "self-consistency",
    "debate",
    "adaptive",
    "dialectic",
    "format",
    "best-of",
    "council",
    "correction",
    "confident",
]

DEFAULT_MAJORITY = 3
DEFAULT_DEBATE = (3, 2)
DEFAULT_BEST_OF = 6
DEFAULT_MEMBERS = 3
DEFAULT_CONFIDENT = 8
MAX_SAMPLES = 256
"""The most answers an arm may ask for on one item."""
DEFAULT_SAMPLING_TEMPERATURE = 0.7
DEFAULT_ARMS = "single,majority:3,self-consistency,debate:3x2,dialectic"

_DEBATE_SHAPE = re.compile(r"(\d+)x(\d+)")


@dataclass(frozen=True)
class ArmSpec:
    kind: ArmKind
    samples: int = 1
    agents: int = 0
    rounds: int = 0
    explicit: bool = False
    """For self-consistency: K was given (``self-consistency:K``) rather than matched."""
    matched_to: str | None = None
    """For matched self-consistency: the debate arm whose call count K equals."""
    protocol: str = ""
    """For ``format:NAME`` arms: the deliberation protocol the engine runs."""
    rule: StopRule = "leader"
    """For ``adaptive``: when drawing stops."""

    @property
    def name(self) -> str:
        if self.kind == "majority":
            return f"majority:{self.samples}"
        if self.kind == "self-consistency":
            return f"self-consistency:{self.samples}" if self.explicit else "self-consistency"
        if self.kind == "debate":
            return f"debate:{self.agents}x{self.rounds}"
        if self.kind == "format":
            return f"format:{self.protocol}"
        if self.kind == "adaptive":
            if self.rule != "leader":
                return f"adaptive:{self.samples}:{self.rule}"
            return "adaptive" if self.samples == AdaptivePlan().most else f"adaptive:{self.samples}"
        if self.kind in ("council", "correction"):
            return self.kind if self.samples == DEFAULT_MEMBERS else f"{self.kind}:{self.samples}"
        if self.kind in ("best-of", "confident"):
            return f"{self.kind}:{self.samples}"
        return self.kind

    @property
    def planned_calls(self) -> int | None:
        """Calls per item when no reply is cut off; ``None`` for the engine-driven dialectic arm."""
        if self.kind == "debate":
            return self.agents * self.rounds
        if self.kind in ("dialectic", "format", "adaptive", "best-of", "council", "correction"):
            return None
        return self.samples


def parse_arms(text: str) -> list[ArmSpec]:
    """``"single,majority:5,self-consistency,debate:3x2,dialectic"`` → arm specs, in the given order.

    Self-consistency without K takes as many samples as the first debate arm makes calls
    (A×R), or as ``debate:3x2`` would when the run has no debate arm.
    """
    names = [part.strip().lower() for part in text.split(",") if part.strip()]
    if not names:
        raise InvalidArgumentsError("--arms needs at least one arm, e.g. --arms single,debate:3x2")
    specs = [_parse_one(name) for name in names]
    debate = next((s for s in specs if s.kind == "debate"), None)
    matched_to = debate.name if debate else f"debate:{DEFAULT_DEBATE[0]}x{DEFAULT_DEBATE[1]} (not in this run)"
    calls = debate.agents * debate.rounds if debate else DEFAULT_DEBATE[0] * DEFAULT_DEBATE[1]
    specs = [
        ArmSpec("self-consistency", samples=calls, matched_to=matched_to)
        if s.kind == "self-consistency" and not s.explicit
        else s
        for s in specs
    ]
    kinds = [s.kind for s in specs]
    for kind in ("single", "self-consistency", "dialectic"):
        if kinds.count(kind) > 1:
            raise InvalidArgumentsError(f"--arms lists {kind} more than once")
    names = [s.name for s in specs]
    for name in names:
        if names.count(name) > 1:
            raise InvalidArgumentsError(f"--arms lists {name} more than once")
    return specs


def _parse_one(name: str) -> ArmSpec:
    kind, _, arg = name.partition(":")
    kind = {"sc": "self-consistency", "majority-vote": "majority"}.get(kind, kind)
    if kind == "single" and not arg:
        return ArmSpec("single")
    if kind == "dialectic" and not arg:
        return ArmSpec("dialectic")
    if kind == "adaptive":
        budget, _, rule = arg.partition(":")
        most = _count(budget, AdaptivePlan().most, name)
        if most < AdaptivePlan().first:
            raise InvalidArgumentsError(f"arm '{name}': adaptive draws at least {AdaptivePlan().first} answers")
        if rule and rule not in STOP_RULES:
            raise InvalidArgumentsError(f"arm '{name}': the stop rules are {', '.join(STOP_RULES)}")
        return ArmSpec("adaptive", samples=most, rule=cast(StopRule, rule or "leader"))
    if kind in ("best-of", "bestof", "confident"):
        kind = "best-of" if kind == "bestof" else kind
        count = _count(arg, DEFAULT_BEST_OF if kind == "best-of" else DEFAULT_CONFIDENT, name)
        if count < 2:
            raise InvalidArgumentsError(f"arm '{name}': {kind} needs at least 2 answers to choose from")
        return ArmSpec(cast(ArmKind, kind), samples=count)
    if kind in ("council", "correction"):
        members = _count(arg, DEFAULT_MEMBERS, name)
        if not 2 <= members <= 26:
            raise InvalidArgumentsError(f"arm '{name}': {kind} takes 2 to 26 members")
        return ArmSpec(cast(ArmKind, kind), samples=members)
    if kind == "majority":
        return ArmSpec("majority", samples=_count(arg, DEFAULT_MAJORITY, name))
    if kind == "self-consistency":
        return ArmSpec("self-consistency", samples=_count(arg, 0, name), explicit=bool(arg))
    if kind == "debate":
        agents, rounds = DEFAULT_DEBATE
        if arg:
            shape = _DEBATE_SHAPE.fullmatch(arg)
            if shape is None:
                raise InvalidArgumentsError(f"arm '{name}': write debate:AxR, e.g. debate:3x2 (3 agents, 2 rounds)")
            agents, rounds = int(shape.group(1)), int(shape.group(2))
        if agents < 2 or rounds < 1:
            raise InvalidArgumentsError(f"arm '{name}': a debate needs at least 2 agents and 1 round")
        return ArmSpec("debate", agents=agents, rounds=rounds)
    if kind == "format":
        if arg not in FORMATS:
            raise InvalidArgumentsError(f"arm '{name}': the formats are {', '.join(FORMATS)}")
        return ArmSpec("format", protocol=arg)
    known = (
        "single, majority:K, self-consistency[:K], debate:AxR, adaptive[:M[:RULE]], best-of:N, council[:N], "
        "correction[:N], confident:N, dialectic, format:NAME"
    )
    raise InvalidArgumentsError(f"unknown arm '{name}' (known: {known})")


def _count(arg: str, default: int, name: str) -> int:
    if not arg:
        return default
    if not arg.isdigit() or not 1 <= int(arg) <= MAX_SAMPLES:
        raise InvalidArgumentsError(
            f"arm '{name}': the number of samples must be a whole number from 1 to {MAX_SAMPLES}"
        )
    return int(arg)


async def run_arm(spec: ArmSpec, item: Item, env: ArmEnv) -> ItemResult:
    """Run one arm on one item; only errors that would fail every item propagate (the run stops)."""
    meter = Meter()
    started = time.perf_counter()
    if spec.kind == "single":
        reply = await ask(
            env, meter, item, env.agents[0], first_turn(item), GREEDY_TEMPERATURE, spec.name, "greedy", draw=0
        )
        return _result(spec, item, ["greedy"], [[reply]], meter, started)
    if spec.kind in ("majority", "self-consistency"):
        replies = await gather_or_cancel(
            ask(
                env, meter, item, env.agents[0], first_turn(item), env.temperature, spec.name, f"sample-{k + 1}", draw=k
            )
            for k in range(spec.samples)
        )
        return _result(spec, item, ["samples"], [replies], meter, started)
    if spec.kind == "debate":
        stages, rounds = await _debate(spec, item, env, meter)
        return _result(spec, item, stages, rounds, meter, started)
    if spec.kind == "adaptive":
        stages, rounds = await _adaptive(spec, item, env, meter)
        return _result(spec, item, stages, rounds, meter, started, weighted=True)
    if spec.kind in SELECTING:
        picked = await SELECTING[spec.kind](env, meter, item, spec.name, spec.samples)
        return _picked_result(spec, item, picked, meter, started)
    stages, rounds, judge = await run_dialectic(item, env, meter, protocol=spec.protocol or None)
    return _result(spec, item, stages, rounds, meter, started, judge=judge)


async def _council(env: ArmEnv, meter: Meter, item: Item, arm: str, members: int) -> Picked:
    return await council(env, meter, item, arm, CouncilPlan(members=members))


SELECTING = {"best-of": best_of, "council": _council, "correction": correction, "confident": confident}
"""The arms of :mod:`.selection`, each ``(env, meter, item, arm name, count) -> Picked``."""


async def _debate(spec: ArmSpec, item: Item, env: ArmEnv, meter: Meter) -> tuple[list[str], list[list[Reply]]]:
    conversations = [first_turn(item) for _ in range(spec.agents)]
    rounds: list[list[Reply]] = []
    for number in range(1, spec.rounds + 1):
        if rounds:
            previous = rounds[-1]
            conversations = [
                (*conv, *_own(previous[a]), Message("user", _update(previous, a)))
                for a, conv in enumerate(conversations)
            ]
        rounds.append(
            await gather_or_cancel(
                ask(
                    env,
                    meter,
                    item,
                    env.agents[a % len(env.agents)],
                    conv,
                    env.temperature,
                    spec.name,
                    f"agent-{a + 1}",
                    round_number=number,
                )
                for a, conv in enumerate(conversations)
            )
        )
    return [f"round {r}" for r in range(1, spec.rounds + 1)], rounds


async def _adaptive(spec: ArmSpec, item: Item, env: ArmEnv, meter: Meter) -> tuple[list[str], list[list[Reply]]]:
    plan = AdaptivePlan(most=spec.samples, rule=spec.rule)

    async def answer(k: int) -> Reply:
        agent, temperature = panel_member(env, k)
        if k == 0:
            temperature = GREEDY_TEMPERATURE  # the model's most likely answer comes first, and wins ties
        return await ask(env, meter, item, agent, first_turn(item), temperature, spec.name, f"sample-{k + 1}", draw=k)

    replies = await gather_or_cancel(answer(k) for k in range(plan.first))
    while not sampling_done([r.answer for r in replies], plan):
        replies.append(await answer(len(replies)))
    answers = [r.answer for r in replies]
    if not is_contested(answers, plan):
        return ["samples"], [replies]
    options = exchange_options(answers, [r.text for r in replies])

    async def review(k: int) -> Reply:
        agent, temperature = panel_member(env, k)
        prompt = render_agents(
            EXCHANGE_TEMPLATE, problem=item.question, options=options, own=replies[k % len(replies)].answer
        )
        return await ask(
            env, meter, item, agent, (Message("user", prompt),), temperature, spec.name, f"reviewer-{k + 1}"
        )

    reviews = await gather_or_cancel(review(k) for k in range(plan.reviewers))
    return ["samples", "exchange"], [replies, reviews]


def _own(reply: Reply) -> tuple[Message, ...]:
    """The agent's previous reply as its turn in the conversation (nothing when that call failed)."""
    return (Message("assistant", reply.text),) if reply.error is None else ()


def _update(previous: list[Reply], agent: int) -> str:
    """Round r > 1: the others' previous replies, in agent order (the agent's own is in its history)."""
    others = [r.text for i, r in enumerate(previous) if i != agent and r.error is None]
    return render("debate_update", others=others)


def _result(
    spec: ArmSpec,
    item: Item,
    stages: list[str],
    rounds: list[list[Reply]],
    meter: Meter,
    started: float,
    *,
    judge: Reply | None = None,
    weighted: bool = False,
) -> ItemResult:
    """Decide the final answer: the judge's when there is one; with ``weighted``, every reply's answer
    weighted by its confidence (the adaptive arm); else the last stage's majority."""
    deciding = [judge] if judge is not None else ([r for stage in rounds for r in stage] if weighted else rounds[-1])
    if weighted:
        tally = weighted_vote([Ballot(r.answer, r.confidence) for r in deciding])
        vote = Vote(tally.winner, tally.counts, tally.tied)
    else:
        vote = majority_vote([r.answer for r in deciding])
    return _scored(
        spec,
        item,
        Picked(stages, rounds, vote.winner, judge=judge, votes=vote.counts if len(deciding) > 1 else {}, tie=vote.tied),
        deciding,
        meter,
        started,
    )


def _picked_result(spec: ArmSpec, item: Item, picked: Picked, meter: Meter, started: float) -> ItemResult:
    deciding = [picked.judge] if picked.judge is not None else [r for stage in picked.rounds for r in stage]
    return _scored(spec, item, picked, deciding, meter, started)


def _scored(
    spec: ArmSpec, item: Item, picked: Picked, deciding: list[Reply], meter: Meter, started: float
) -> ItemResult:
    """The item's result: the final answer scored the task's way, and why there is none when there is none."""
    outcome: Outcome
    score = item.score(picked.final) if picked.final is not None else 0.0
    if picked.final is None:
        if any(r.truncated for r in deciding):
            outcome = "truncated"
        elif any(r.error is not None for r in deciding):
            outcome = "failed"
        else:
            outcome = "unparsed"
    else:
        outcome = "correct" if score >= 1.0 else "wrong"
    return ItemResult(
        arm=spec.name,
        item_id=item.id,
        index=item.index,
        question=item.question,
        truth=item.truth,
        match=item.match,
        stages=picked.stages,
        rounds=picked.rounds,
        judge=picked.judge,
        final=picked.final,
        votes=picked.votes,
        tie=picked.tie,
        outcome=outcome,
        score=score if item.scorer is not None else None,
        calls=meter.calls,
        input_tokens=meter.input_tokens,
        output_tokens=meter.output_tokens,
        wall_s=round(time.perf_counter() - started, 4),
    )
