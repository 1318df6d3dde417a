"""Who writes the synthesis when the judge cannot: ``judge.fallback``.

The judge is the one participant whose failure used to sink a whole debate: every contribution
saved, and no solution. When its synthesis call still fails after the client's retries and the
node's second chance, a participant of the debate takes the judge's place for that one step: it
gets the judge's instructions (system prompt, synthesis template) and the same view of the
debate, and answers on its own model and endpoint. The solution then names it
(``synthesizedBy``) and says why (``judgeFailure``); the report, the export and the page show both.

``judge.fallback`` chooses: an agent's id (that agent), ``auto`` (the default: the agents still in
the debate that a model plays, those on another model than the judge's first, each tried in
turn) or ``off`` (the judge's failure fails the debate, as it did before).
"""

from __future__ import annotations

from dialectic.agents.participants import DebateAgent, Judge
from dialectic.core.config import JUDGE_FALLBACK_OFF, JUDGE_FALLBACK_WORDS, AgentConfig


def stand_ins(judge: Judge, agents: list[DebateAgent], active_ids: set[str]) -> list[Judge]:
    """The participants that may write the synthesis in ``judge``'s place, in the order they are asked."""
    chosen = judge.config.fallback
    if chosen == JUDGE_FALLBACK_OFF:
        return []
    playable = [a for a in agents if not a.config.is_human]
    if isinstance(chosen, str) and chosen not in JUDGE_FALLBACK_WORDS:
        named = [a for a in playable if a.id == chosen]
        if named:
            return [as_judge(judge, named[0])]
        # the agent named was not picked for this debate (a team): any participant, as with auto
    active = [a for a in playable if a.id in active_ids]
    active.sort(key=lambda agent: _same_model(agent.config, judge.config))  # stable: configured order within
    return [as_judge(judge, agent) for agent in active]


def as_judge(judge: Judge, agent: DebateAgent) -> Judge:
    """``agent`` in the judge's seat: its identity, model and client; the judge's prompts and settings."""
    seat = Judge(
        config=agent.config,
        client=agent.client,
        system_prompt=judge.system_prompt,
        system_source=judge.system_source,
        summary_prompt=judge.summary_prompt,
        summarization=judge.summarization,
        problem_kind=judge.problem_kind,
    )
    seat.stance = judge.stance  # the chair's, not the position the agent argued
    return seat


def _same_model(agent: AgentConfig, judge: AgentConfig) -> bool:
    """Whether ``agent`` answers on the judge's model (what failed the judge may well fail it too)."""
    return (agent.provider, agent.base_url, agent.model) == (judge.provider, judge.base_url, judge.model)
