"""The adaptive answer protocol's rules, as pure functions: when to stop sampling, when answers
are split, how the exchange presents them, and the confidence-weighted vote that decides.

The protocol, for a question with one right answer (Choi et al., "Debate or Vote", 2025;
Kaesberg et al., "Voting or Consensus?", 2025; adaptive-consistency):

1. **Blind first round.** Independent answers, no peers, no roles, drawn ``first`` at once, then
   one at a time, until the leading answer cannot lose within ``most`` answers or holds
   ``stop_share`` of them. The first answer is the model's most likely one (temperature 0) and the
   second a sample: when they agree (2 of 2), sampling stops there. Replayed over the same runs
   (``--contest 1``), that kept 1,869 of their 2,330 answers and turned 7 items right and 2 wrong.
2. **One exchange, only when contested.** When sampling ends with no answer holding
   ``split_share`` and the two leading answers each given ``contest`` times or more,
   ``reviewers`` participants see the distinct answers, anonymised ("answer A, given by 3"),
   each with one worked solution, and are asked to find the first wrong step, keeping their
   answer unless they can show it is wrong (a correction-biased update: discussion alone does
   not move the odds, correction does). Scattered answers (at most one given twice) are no
   contest: the model is guessing, its reviewers guess too, and their ballots add noise to the
   vote. Replayed over the first full runs, which drew 3 answers at once and exchanged on every
   split (``benchmarks/adaptive_replay.py --first 3``), dropping the exchanges over scattered
   answers turned 14 of the 0.5B's 500 items right and 4 wrong.
3. **The vote.** Every answer given, first round included, counts, weighted by its confidence: the
   probability the model gave the answer's tokens where the provider returns token
   probabilities, else a confidence the reply states, else 1.

Both the bench's ``adaptive`` arm and the engine's ``adaptive`` format follow these rules.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, get_args

from dialectic.llm.base import TokenLogprob

StopRule = Literal["leader", "beta", "esc"]
STOP_RULES: tuple[str, ...] = get_args(StopRule)
"""When the first round stops drawing answers:

* ``leader`` (the default): the leading answer cannot lose within ``most``, or holds ``stop_share``;
* ``beta`` (Adaptive-Consistency, Aggarwal et al. 2023): the posterior probability that the leading
  answer is more likely than the runner-up, under a uniform Beta prior on the two, reaches ``level``;
* ``esc`` (Early-Stopping Self-Consistency, Li et al. 2024): answers are drawn in windows of ``window``,
  and drawing stops after a window whose answers all agree.
"""


@dataclass(frozen=True)
class AdaptivePlan:
    """The protocol's numbers (defaults: at most 5 first-round answers, 2 drawn at once)."""

    first: int = 2
    """Answers drawn at once before any stopping check."""
    most: int = 5
    """The most first-round answers drawn."""
    stop_share: float = 0.8
    """Stop early once the leader holds this share of the answers drawn (3 of 3, 4 of 5)."""
    split_share: float = 0.6
    """Below this share for the leader when sampling ends, the answers are split."""
    contest: int = 2
    """A split goes to the exchange only when the two leading answers were each given this many times."""
    reviewers: int = 3
    """Participants in the exchange."""
    rule: StopRule = "leader"
    """When drawing stops (:data:`STOP_RULES`)."""
    level: float = 0.95
    """``beta``: the posterior probability that stops drawing."""
    window: int = 2
    """``esc``: answers per window."""

    def __post_init__(self) -> None:
        if not 1 <= self.first <= self.most:
            raise ValueError("an adaptive plan needs 1 ≤ first ≤ most")
        if self.contest < 1:
            raise ValueError("contest is at least 1")
        if self.reviewers < 0:
            raise ValueError("reviewers cannot be negative")
        if self.rule not in STOP_RULES:
            raise ValueError(f"unknown stop rule {self.rule!r} (known: {', '.join(STOP_RULES)})")
        if not 0.5 < self.level < 1 or self.window < 1:
            raise ValueError("an adaptive plan needs 0.5 < level < 1 and a window of at least 1")


@dataclass(frozen=True)
class Ballot:
    """One answer given, with the weight it votes with."""

    answer: str | None
    confidence: float | None = None
    """In [0, 1]; ``None``: unknown (votes with weight 1)."""

    @property
    def weight(self) -> float:
        return 1.0 if self.confidence is None else self.confidence


@dataclass(frozen=True)
class Tally:
    winner: str | None
    """``None`` when no ballot carried an answer."""
    counts: dict[str, int]
    """Ballots per answer, in the order the answers were first given."""
    weights: dict[str, float]
    """Summed confidence per answer, same order."""
    agreeing: int
    """Ballots for the winner."""
    answered: int
    """Ballots that carried an answer."""
    tied: bool
    """More than one answer had the top weight; the earliest given won."""

    @property
    def agreement(self) -> str:
        """``"5 of 7 agree"``."""
        return f"{self.agreeing} of {self.answered} agree"


def _leaders(answers: Sequence[str | None]) -> tuple[int, int]:
    counts = sorted((answers.count(a) for a in set(answers) if a is not None), reverse=True)
    return (counts[0] if counts else 0), (counts[1] if len(counts) > 1 else 0)


def leader_more_likely(leader: int, runner_up: int) -> float:
    """P(the leader's answer is likelier than the runner-up's | their counts), under a uniform Beta prior.

    With ``p`` the leader's share of the two, ``p ~ Beta(leader + 1, runner_up + 1)`` and the answer is
    ``P(p > 1/2)``: for whole counts, the chance of fewer than ``leader + 1`` heads in
    ``leader + runner_up + 1`` fair coin flips."""
    flips = leader + runner_up + 1
    return sum(math.comb(flips, heads) for heads in range(leader + 1)) / float(2**flips)


def sampling_done(answers: Sequence[str | None], plan: AdaptivePlan) -> bool:
    """Whether the first round may stop: budget spent, or the plan's stop rule (:data:`STOP_RULES`) holds."""
    drawn = len(answers)
    if drawn >= plan.most:
        return True
    if drawn < plan.first:
        return False
    leader, runner_up = _leaders(answers)
    if plan.rule == "beta":
        return leader > 0 and leader_more_likely(leader, runner_up) >= plan.level
    if plan.rule == "esc":
        if drawn % plan.window != 0:
            return False
        window = answers[-plan.window :]
        return window[0] is not None and all(answer == window[0] for answer in window)
    if leader - runner_up > plan.most - drawn:
        return True
    return leader > 0 and leader / drawn >= plan.stop_share


def is_split(answers: Sequence[str | None], plan: AdaptivePlan) -> bool:
    """Whether the first round ended without a clear leader."""
    if not answers:
        return False
    leader, runner_up = _leaders(answers)
    return leader == runner_up or leader / len(answers) < plan.split_share


def is_contested(answers: Sequence[str | None], plan: AdaptivePlan) -> bool:
    """Whether the first round ended split between answers that each have support: an exchange follows."""
    return is_split(answers, plan) and _leaders(answers)[1] >= plan.contest


@dataclass(frozen=True)
class Option:
    """One distinct answer as the exchange shows it: a letter, how many gave it, one worked solution."""

    label: str
    answer: str
    given_by: int
    working: str


def exchange_options(answers: Sequence[str | None], texts: Sequence[str]) -> list[Option]:
    """The distinct answers, most given first (ties: earliest), each with the first reply that gave it."""
    order: dict[str, int] = {}
    for index, answer in enumerate(answers):
        if answer is not None and answer not in order:
            order[answer] = index
    ranked = sorted(order, key=lambda a: (-answers.count(a), order[a]))
    return [
        Option(label=chr(ord("A") + i), answer=answer, given_by=answers.count(answer), working=texts[order[answer]])
        for i, answer in enumerate(ranked[:26])
    ]


def weighted_vote(ballots: Sequence[Ballot]) -> Tally:
    """The answer with the most summed confidence; a tie goes to the tied answer given earliest."""
    counts: dict[str, int] = {}
    weights: dict[str, float] = {}
    for ballot in ballots:
        if ballot.answer is None:
            continue
        counts[ballot.answer] = counts.get(ballot.answer, 0) + 1
        weights[ballot.answer] = weights.get(ballot.answer, 0.0) + ballot.weight
    if not counts:
        return Tally(None, {}, {}, 0, 0, False)
    top = max(weights.values())
    leaders = [a for a, w in weights.items() if math.isclose(w, top, rel_tol=1e-9, abs_tol=1e-12)]
    winner = leaders[0]
    return Tally(
        winner=winner,
        counts=counts,
        weights={a: round(w, 6) for a, w in weights.items()},
        agreeing=counts[winner],
        answered=sum(counts.values()),
        tied=len(leaders) > 1,
    )


_BOXED = re.compile(r"\\boxed\s*\{((?:[^{}]|\{[^{}]*\})*)\}")
_TAGGED = re.compile(r"<answer>(.*?)</answer>", re.IGNORECASE | re.DOTALL)
_STATED = re.compile(r"confidence\s*(?:level)?\s*(?:is|of)?\s*[:=]?\s*(\d{1,3}(?:\.\d+)?)\s*(%?)", re.IGNORECASE)
MIN_CONFIDENCE = 0.01
"""The least weight a ballot carries: one improbable token must not silence an answer."""


def answer_confidence(text: str, logprobs: Sequence[TokenLogprob]) -> float | None:
    """The probability the model gave the tokens of the last ``<answer>…</answer>`` (else ``\\boxed{…}``)
    answer in ``text``.

    The tokens are laid end to end to find which of them spell the answer; ``None`` when there
    are no token probabilities, no tagged or boxed answer, or the tokens do not spell ``text``.
    """
    if not logprobs:
        return None
    matches = list(_TAGGED.finditer(text)) or list(_BOXED.finditer(text))
    if not matches:
        return None
    joined = "".join(t.token for t in logprobs)
    offset = joined.find(text) if joined != text else 0
    if offset < 0:
        return None
    start, end = matches[-1].span(1)
    start, end = start + offset, end + offset
    total = 0.0
    position = 0
    for token in logprobs:
        token_end = position + len(token.token)
        if token_end > start and position < end:
            total += token.logprob
        position = token_end
    return max(MIN_CONFIDENCE, min(1.0, math.exp(total)))


def mean_logprob(logprobs: Sequence[TokenLogprob]) -> float | None:
    """The mean natural-log probability of a reply's tokens (DeepConf's trace confidence); ``None`` without them."""
    if not logprobs:
        return None
    return sum(t.logprob for t in logprobs) / len(logprobs)


def stated_confidence(text: str) -> float | None:
    """A confidence the reply states ("Confidence: 80%", "confidence 0.7"), in [0, 1]; ``None`` when none."""
    found = _STATED.findall(text)
    if not found:
        return None
    number, percent = found[-1]
    value = float(number)
    if percent or value > 1:
        value /= 100
    return max(MIN_CONFIDENCE, min(1.0, value)) if value <= 1 else None


def confidence(text: str, logprobs: Sequence[TokenLogprob]) -> float | None:
    """The token-probability confidence where there is one, else the stated one, else ``None``."""
    measured = answer_confidence(text, logprobs)
    return measured if measured is not None else stated_confidence(text)
