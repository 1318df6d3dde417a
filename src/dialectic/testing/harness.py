"""A harness for driving the engine on the scripted model: used by the test suite, usable by yours."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dialectic.core import events as ev
from dialectic.core.config import SystemConfig
from dialectic.core.domain import DebateState
from dialectic.engine import DebateEngine, DebateRequest
from dialectic.llm.base import CompletionRequest
from dialectic.llm.registry import ProviderPool
from dialectic.llm.retry import RetryPolicy
from dialectic.llm.scripted import Responder, Script, ScriptedProvider, ScriptedReply, default_reply
from dialectic.store.base import DebateStore

ROLES = ("architect", "performance", "kiss", "security")
FAST_RETRY = RetryPolicy(max_attempts=2, base_delay_s=0.001, max_delay_s=0.002, jitter_s=0.0)


def make_config(agents: int = 2, rounds: int = 1, **debate: Any) -> SystemConfig:
    return SystemConfig.model_validate(
        {
            "agents": [
                {"id": f"agent-{role}", "name": role.title(), "role": role, "provider": "scripted", "model": "m"}
                for role in ROLES[:agents]
            ],
            "judge": {"id": "judge", "name": "Judge", "role": "generalist", "provider": "scripted", "model": "m"},
            "debate": {"rounds": rounds, **debate},
        }
    )


def run(coro: Coroutine[Any, Any, Any]) -> Any:
    return asyncio.run(coro)


@dataclass
class Harness:
    store: DebateStore
    provider: ScriptedProvider
    events: list[ev.Event] = field(default_factory=list)

    def engine(self, provider: ScriptedProvider | None = None) -> DebateEngine:
        if provider is not None:
            self.provider = provider
        bus = ev.EventBus()
        bus.subscribe(self.events.append)
        pool = ProviderPool(overrides={"scripted": self.provider})
        return DebateEngine(self.store, pool, bus, retry=FAST_RETRY)

    def start(
        self,
        config: SystemConfig,
        *,
        problem: str = "Design a rate limiter",
        clarify: bool = False,
        config_dir: Path = Path("."),
    ) -> DebateState:
        request = DebateRequest(problem=problem, config=config, config_dir=config_dir, clarify=clarify)
        return run(self.engine().start(request))

    def resume(
        self, debate_id: str, answers: dict[str, str] | None = None, provider: ScriptedProvider | None = None
    ) -> DebateState:
        return run(self.engine(provider).resume(debate_id, answers))

    def of(self, kind: type[ev.Event]) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]

    def tags(self) -> list[str]:
        return [c.tag for c in self.provider.calls]


def assessment_value(
    *, should_continue: bool = True, score: int = 6, labels: tuple[str, ...] = ("A", "B", "C", "D", "E")
) -> dict[str, Any]:
    """A judge's round assessment as the scripted model would send it (every label scored ``score``)."""
    rubric = dict.fromkeys(
        ("logicalConsistency", "evidence", "engagement", "novelty", "persuasiveness", "relevance"), score
    )
    return {
        "participants": [
            {"participant": f"Participant {label}", "scores": rubric, "strengths": ["clear"], "weaknesses": []}
            for label in labels
        ],
        "flags": {"repetitive": False, "drifting": False, "diminishingReturns": False, "convergenceReached": False},
        "qualityTrend": "stable",
        "shouldContinue": should_continue,
        "reason": "scripted",
    }


def scripted_judge(*, should_continue: bool = True, score: int = 6) -> Responder:
    """The scripted model's default replies, with a judge and voters that answer like real ones.

    Round assessments say ``should_continue`` and score every participant ``score``; votes
    choose the first proposal on the ballot; persona assignments give every agent listed a
    position; verdicts name the first participant the winner. A council's rankings put the
    answers in the order shown; a correction's check finds a violation in every answer and quotes
    its first line as the evidence.
    """

    def respond(request: CompletionRequest) -> Script:
        prompt = request.last_user
        value: dict[str, Any] | None = None
        if request.tag.startswith("ranking"):
            labels = re.findall(r"^### (Response [A-Z])$", prompt, re.MULTILINE)
            return "FINAL RANKING:\n" + "\n".join(f"{place}. {label}" for place, label in enumerate(labels, 1))
        if request.tag.startswith("check"):
            checked = prompt.split("## An answer to check\n", 1)[-1].split("\n\n## Task", 1)[0]
            quoted = next((line.strip() for line in checked.splitlines() if line.strip()), "")
            return f"A step is wrong.\nViolation: the first step\nEvidence: {quoted}"
        if request.tag.startswith("assessment"):
            value = assessment_value(should_continue=should_continue, score=score)
        elif request.tag.startswith("vote"):
            first = re.search(r"^### (Proposal [A-Z])$", prompt, re.MULTILINE)
            value = {"choice": first.group(1) if first else "none", "confidence": 70, "reason": "scripted"}
        elif request.tag.startswith("personas"):
            labels = re.findall(r"^- (Agent \d+):", prompt, re.MULTILINE)
            value = {
                "assignments": [
                    {"participant": label, "position": f"Position of {label}.", "persona": "A careful engineer."}
                    for label in labels
                ]
            }
        elif request.tag.startswith("verdict"):
            value = {
                "summary": "Scripted verdict.",
                "keyPoints": [{"participant": "Participant A", "mainArguments": ["a point"]}],
                "areasOfAgreement": ["scope"],
                "areasOfDisagreement": ["storage"],
                "winner": "Participant A",
                "winnerReasoning": "clearest",
                "qualityScore": 70,
                "insights": ["an insight"],
            }
        if value is not None:
            return ScriptedReply(text=json.dumps(value), structured=value)
        return default_reply(request)

    return respond
