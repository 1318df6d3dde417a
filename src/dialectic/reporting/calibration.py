"""Calibration from stored debates: how well the confidences a model or agent stated matched outcomes.

Pure, recomputed from the debates every time, like the ratings (:mod:`dialectic.reporting.ratings`).

**What counts as a forecast.** A stored debate holds two kinds of stated confidence, each with an
outcome to hold it against:

* a **vote** with a confidence (0–100) on the final proposals, held against the judge's verdict:
  right when the voter chose the proposal the verdict names the winner. Only a structured verdict
  that names a winner is an outcome (the vote's own winner would judge the votes by themselves);
* an **answer** of the adaptive protocol with a confidence (0–1: the answer tokens' probability,
  else a confidence the reply stated), held against the answer the debate decided (its tally):
  right when it is that answer. A reply that states no answer is no forecast.

**Arithmetic.** The Brier score of ``n`` forecasts ``p`` with outcomes ``o`` (1 right, 0 wrong) is
``mean((p - o)²)``: 0 is perfect, 0.25 is what always saying 50% scores, 1 is sure and always wrong.
Forecasts are keyed like the ratings: ``provider/model`` or the agent's id.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from dialectic.core.answers import stated_answer
from dialectic.core.domain import DebateState, Participant
from dialectic.reporting.ratings import RatingKey, rating_key

ForecastSource = Literal["vote", "answer"]
COIN_BRIER = 0.25
"""The Brier score of always stating 50%: a forecaster below it tells more than a coin."""


@dataclass(frozen=True)
class Forecast:
    """One stated confidence and whether what it backed turned out right."""

    debate_id: str
    source: ForecastSource
    agent: Participant
    probability: float
    """The stated confidence, 0–1."""
    right: bool

    @property
    def squared_error(self) -> float:
        return (self.probability - (1.0 if self.right else 0.0)) ** 2


@dataclass
class Calibration:
    """One key's forecasts, summed."""

    key: str
    forecasts: int = 0
    squared_errors: float = 0.0

    @property
    def brier(self) -> float | None:
        """The mean squared error of the forecasts; ``None`` without any."""
        return self.squared_errors / self.forecasts if self.forecasts else None

    def add(self, forecast: Forecast) -> None:
        self.forecasts += 1
        self.squared_errors += forecast.squared_error


def vote_forecasts(state: DebateState) -> list[Forecast]:
    """The debate's votes with a confidence, held against the verdict's winner (none without one)."""
    verdict, vote = state.verdict, state.vote
    if verdict is None or not verdict.structured or verdict.winner_id is None or vote is None:
        return []
    agents = {agent.id: agent for agent in state.agents}
    return [
        Forecast(state.id, "vote", agents[v.voter_id], v.confidence / 100, v.choice_id == verdict.winner_id)
        for v in vote.votes
        if v.confidence is not None and v.voter_id in agents
    ]


def answer_forecasts(state: DebateState) -> list[Forecast]:
    """The adaptive protocol's answers with a confidence, held against the answer the debate decided."""
    tally = state.answer_tally
    if tally is None or tally.answer is None:
        return []
    agents = {agent.id: agent for agent in state.agents}
    forecasts: list[Forecast] = []
    for debate_round in state.rounds:
        for c in debate_round.contributions:
            probability = c.metadata.confidence
            if not c.ok or probability is None or c.agent_id not in agents:
                continue
            answer = stated_answer(c.content, truncated=c.metadata.truncated)
            if answer is not None:
                forecasts.append(
                    Forecast(
                        state.id, "answer", agents[c.agent_id], min(max(probability, 0.0), 1.0), answer == tally.answer
                    )
                )
    return forecasts


def debate_forecasts(state: DebateState) -> list[Forecast]:
    """Every forecast one debate holds (see the module docstring)."""
    return [*vote_forecasts(state), *answer_forecasts(state)]


def compute_calibration(debates: Iterable[DebateState], by: RatingKey) -> dict[str, Calibration]:
    """Key → calibration over ``debates`` (only keys with at least one forecast appear)."""
    found: dict[str, Calibration] = {}
    for state in debates:
        for forecast in debate_forecasts(state):
            key = rating_key(forecast.agent, by)
            found.setdefault(key, Calibration(key)).add(forecast)
    return found
