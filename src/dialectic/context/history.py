"""What each participant sees of the debate so far, as prompt-ready text. Pure functions."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from dialectic.core.domain import AgentClarifications, Contribution, DebateRound, DebateState, DebateSummary

_PHASE_ORDER = {
    "proposal": 0,
    "critique": 1,
    "refinement": 2,
    "response": 0,
    "opening": 0,
    "rebuttal": 0,
    "closing": 0,
    "ranking": 1,
}
_TYPE_LABEL = {
    "proposal": "Proposal",
    "critique": "Critique",
    "refinement": "Refinement",
    "response": "Turn",
    "opening": "Opening statement",
    "rebuttal": "Rebuttal",
    "closing": "Closing statement",
    "ranking": "Ranking",
}


GUARD_LABEL = "Challenge to the consensus (the strongest objection nobody raised)"
"""How the consensus guard's objection is headed in a round's text (``debate.consensusGuard``)."""


def guard_block(rnd: DebateRound) -> str:
    """The consensus guard's objection after ``rnd`` as a labelled block, or ``""`` when it did not speak."""
    if rnd.guard is None:
        return ""
    return f"### Round {rnd.round_number} — {GUARD_LABEL}\n{rnd.guard.objection.strip()}"


def participant_names(state: DebateState) -> dict[str, str]:
    names = {p.id: p.name for p in state.agents}
    if state.judge is not None:
        names[state.judge.id] = state.judge.name
    return names


def format_clarifications(groups: Iterable[AgentClarifications]) -> str:
    """Answered clarifications as ``Q``/``A`` lines, grouped by the agent who asked."""
    blocks: list[str] = []
    for group in groups:
        answered = [item for item in group.items if item.answered]
        if not answered:
            continue
        lines = [f"{group.agent_name} ({group.role}) asked:"]
        for item in answered:
            lines.append(f"- Q ({item.id}): {item.question}")
            lines.append(f"  A: {item.answer}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def describe(contribution: Contribution, names: Mapping[str, str], *, with_roles: bool = True) -> str:
    author = names.get(contribution.agent_id, contribution.agent_id)
    label = f"{_TYPE_LABEL[contribution.type]} by {author}"
    if with_roles:
        label += f" ({contribution.agent_role})"
    if contribution.type == "critique" and contribution.target_agent_id:
        label += f" of {names.get(contribution.target_agent_id, contribution.target_agent_id)}'s proposal"
    if contribution.metadata.truncated:
        label += " [cut off by the token limit]"
    return label


def rounds_text(
    rounds: Iterable[DebateRound],
    names: Mapping[str, str],
    *,
    kinds: tuple[str, ...] | None = None,
    with_roles: bool = True,
) -> str:
    """Successful contributions of ``rounds`` as labelled blocks (carried-over proposals are skipped).

    Within a round the blocks are ordered by phase, then by the order of ``names``, not by
    when calls happened to finish — so the same debate always yields the same prompts.
    ``with_roles=False`` leaves the roles out (the judge, seeing neutral labels, should not
    recognise a participant by them). The consensus guard's objection after a round comes last in
    it (unless ``kinds`` picks contributions).
    """
    order = {agent_id: index for index, agent_id in enumerate(names)}

    def position(c: Contribution) -> tuple[int, int, int]:
        target = order.get(c.target_agent_id or "", -1)
        return (_PHASE_ORDER[c.type], order.get(c.agent_id, len(order)), target)

    blocks: list[str] = []
    for rnd in rounds:
        for c in sorted(rnd.contributions, key=position):
            if not c.ok or c.metadata.carried_over or (kinds is not None and c.type not in kinds):
                continue
            blocks.append(
                f"### Round {rnd.round_number} — {describe(c, names, with_roles=with_roles)}\n{c.content.strip()}"
            )
        if kinds is None and rnd.guard is not None:
            blocks.append(guard_block(rnd))
    return "\n\n".join(blocks)


def perspective(state: DebateState, agent_id: str, before_round: int) -> list[DebateRound]:
    """An agent's own view of rounds before ``before_round``: its proposals, critiques it got, its refinements."""
    views: list[DebateRound] = []
    for rnd in state.rounds:
        if rnd.round_number >= before_round:
            break
        mine = [
            c
            for c in rnd.contributions
            if (c.agent_id == agent_id and c.type in ("proposal", "refinement"))
            or (c.type == "critique" and c.target_agent_id == agent_id)
        ]
        views.append(
            DebateRound(round_number=rnd.round_number, contributions=mine, timestamp=rnd.timestamp, guard=rnd.guard)
        )
    return views


def perspective_text(state: DebateState, agent_id: str, before_round: int) -> str:
    return rounds_text(perspective(state, agent_id, before_round), participant_names(state))


def latest_summary(state: DebateState, agent_id: str, up_to_round: int) -> DebateSummary | None:
    basis = summary_basis(state, agent_id, up_to_round)
    return None if basis is None else basis[1]


def summary_basis(state: DebateState, agent_id: str, up_to_round: int) -> tuple[int, DebateSummary] | None:
    """The agent's most recent summary in a round up to ``up_to_round``, with that round's number: what an
    incremental summary starts from (it then reads only what came after)."""
    for rnd in reversed(state.rounds):
        if rnd.round_number <= up_to_round and agent_id in rnd.summaries:
            return rnd.round_number, rnd.summaries[agent_id]
    return None


def history_for(state: DebateState, agent_id: str, round_number: int, *, full_history: bool) -> tuple[str, bool]:
    """The history an agent's prompt carries in ``round_number``, and whether it is its own summary.

    The agent's most recent summary wins; otherwise, when ``full_history`` is on, the agent's
    own thread of every earlier round: its proposals and refinements and the critiques it
    received (what it has seen and said); otherwise nothing (round 2+ proposals already carry
    the agent's latest position). The thread is the agent's own so that its next round can
    start as soon as its own refinement exists, without waiting for the other agents.

    The consensus guard's objection after the previous round is always in it (see
    :mod:`dialectic.engine.consensus_guard`): after the summary, or alone without the full history.
    """
    summary = latest_summary(state, agent_id, round_number)
    previous = state.find_round(round_number - 1)
    challenge = guard_block(previous) if previous is not None else ""
    if summary is not None:
        return "\n\n".join(t for t in (summary.summary, challenge) if t), True
    if not full_history:
        return challenge, False
    return perspective_text(state, agent_id, round_number), False


POSITION_KINDS: tuple[str, ...] = ("proposal", "refinement", "response", "opening", "rebuttal", "closing")
"""Contributions that state a participant's position (every kind but critiques)."""


def final_round_text(state: DebateState) -> str:
    """The last round's proposals and refinements (or turns): what the judge summarizes when the debate is long."""
    last = state.last_round
    if last is None:
        return ""
    return rounds_text([last], participant_names(state), kinds=POSITION_KINDS)


def debate_text(state: DebateState) -> str:
    return rounds_text(state.rounds, participant_names(state))
