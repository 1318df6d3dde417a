"""The report's sections for what the protocols add: round assessments, the vote, the verdict, stances.

Pure rendering, used by :mod:`dialectic.reporting.report`; names come in through ``name`` so both
modules show participants the same way.
"""

from __future__ import annotations

from collections.abc import Callable

from dialectic.core.domain import (
    RUBRIC,
    AnswerTally,
    CorrectionOutcome,
    CouncilOutcome,
    DebateState,
    RoundAssessment,
    Verdict,
    VoteOutcome,
)

Name = Callable[[str], str]


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _title(criterion: str) -> str:
    return criterion.replace("_", " ").capitalize()


def assessment_blocks(a: RoundAssessment, name: Name) -> list[str]:
    """``#### Judge assessment`` of one round: the rubric table, flags, trend, decision and measurements."""
    blocks = ["#### Judge assessment"]
    if a.structured and a.participants:
        head = "| Participant | " + " | ".join(_title(c) for c in RUBRIC) + " | Score |"
        rows = [head, "|---|" + "--:|" * (len(RUBRIC) + 1)]
        for p in a.participants:
            scores = " | ".join(f"{getattr(p.scores, c):g}" for c in RUBRIC)
            rows.append(f"| {_cell(name(p.agent_id))} | {scores} | {p.score:.1f} |")
        blocks.append("\n".join(rows))
        notes = [
            f"- {_cell(name(p.agent_id))}: strengths: {_cell('; '.join(p.strengths) or '—')}; "
            f"weaknesses: {_cell('; '.join(p.weaknesses) or '—')}"
            for p in a.participants
        ]
        blocks.append("\n".join(notes))
    elif not a.structured:
        blocks.append("_The judge's assessment was not available; only the detectors' figures are shown._")
    facts = []
    if a.structured:
        facts.append(f"**Quality:** {a.quality:.1f}/10 ({a.quality_trend})")
        facts.append(
            f"**Continue:** {'yes' if a.should_continue else 'no'}" + (f" — {_cell(a.reason)}" if a.reason else "")
        )
    flags = [_title(n) for n, on in a.flags.model_dump().items() if on]
    facts.append(f"**Flags:** {', '.join(flags) if flags else 'none'}")
    if a.similarity is not None or a.repetition is not None:
        measured = []
        if a.similarity is not None:
            measured.append(f"positions {a.similarity:.0%} alike")
        if a.repetition is not None:
            measured.append(f"most repeated turn {a.repetition:.0%} like its predecessor")
        facts.append(f"**Measured:** {', '.join(measured)} ({a.measured_by or 'unknown measure'})")
    blocks.append(" · ".join(facts))
    return blocks


def vote_blocks(outcome: VoteOutcome, name: Name) -> list[str]:
    rule = outcome.rule + (f" (threshold {outcome.threshold:.0%})" if outcome.threshold else "")
    rows = ["| Proposal of | Votes |", "|---|--:|"]
    rows += [f"| {_cell(name(agent))} | {support:g} |" for agent, support in outcome.tally.items()]
    if outcome.winner_id is not None:
        result = f"**Winner:** {_cell(name(outcome.winner_id))}, " + (
            "with consensus" if outcome.consensus else "without reaching the rule's bar"
        )
    else:
        result = "**No winner:** " + ("a tie" if outcome.tie else "no votes carried support")
    ballots = [
        f"- {_cell(name(v.voter_id))} → {_cell(name(v.choice_id))}"
        + (f" (confidence {v.confidence})" if v.confidence is not None else "")
        + (f": {_cell(v.reason)}" if v.reason else "")
        for v in outcome.votes
    ]
    return ["## Vote", f"**Rule:** {rule}", "\n".join(rows), result, "\n".join(ballots) or "_No votes were cast._"]


def tally_blocks(tally: AnswerTally) -> list[str]:
    """The adaptive protocol's tally (``format: adaptive``): every answer given, its count and its weight."""
    rows = ["| Answer | Replies | Weight |", "|---|--:|--:|"]
    rows += [
        f"| {_cell(answer)} | {count} | {tally.weights.get(answer, 0.0):.2f} |"
        for answer, count in tally.counts.items()
    ]
    if tally.answer is None:
        result = "**No answer:** no reply stated one; the judge synthesized the solution"
    else:
        result = f"**Answer:** {_cell(tally.answer)} — {tally.agreement}" + (
            " (a tie: the earliest given)" if tally.tied else ""
        )
    how = (
        "The answers were split, so one exchange over them followed the first round; every answer votes."
        if tally.exchanged
        else "The first round's answers agreed enough; no exchange was needed."
    )
    return [
        "## Tally",
        "\n".join(rows),
        result,
        how + " Weight: the answer tokens' probability where the provider gave it, else a stated confidence, else 1.",
    ]


def council_blocks(outcome: CouncilOutcome, name: Name) -> list[str]:
    """The council's count (``format: council``): Borda points best first, each ranker's order, what the chair got."""
    chosen = set(outcome.chosen)
    rows = ["| Answer of | Borda points | Given to the chair |", "|---|--:|---|"]
    rows += [
        f"| {_cell(name(s.agent_id))} | {s.points} | {'yes' if s.agent_id in chosen else 'no'} |"
        for s in outcome.standings
    ]
    rankings = [
        f"- {_cell(name(r.ranker_id))}: "
        + (" > ".join(_cell(name(agent)) for agent in r.order) or "_its reply named no answer_")
        + " (shown as "
        + ", ".join(f"Response {label} = {_cell(name(agent))}" for label, agent in r.shown.items())
        + ")"
        for r in outcome.rankings
    ]
    return [
        "## Council",
        "Every member answered on its own, then ranked every answer without its author's name, each in an order of "
        "its own; the rankings were added up by Borda count (first of n answers: n − 1 points, last: 0).",
        "\n".join(rows),
        "**The chair was given:** " + ", ".join(_cell(name(agent)) for agent in outcome.chosen) + " (best first)",
        "### Rankings",
        "\n".join(rankings) or "_No ranking was saved._",
    ]


def correction_blocks(outcome: CorrectionOutcome, name: Name) -> list[str]:
    """The correction-biased critique's decision (``format: correction``): each check, the points, the winner."""
    checks = []
    for check in outcome.checks:
        pair = f"{_cell(name(check.critic_id))} → {_cell(name(check.target_id))}"
        if check.corrects:
            checks.append(
                f"- {pair}: **corrects** — violation: {_cell(check.violation or '')}; "
                f"evidence: “{_cell(check.evidence or '')}”"
            )
        else:
            checks.append(f"- {pair}: holds")
    rows = ["| Answer | Points |", "|---|--:|"]
    rows += [f"| {_cell(answer)} | {points:g} |" for answer, points in outcome.points.items()]
    if outcome.winner is None:
        result = "**No answer:** no reply stated one; the judge synthesized the solution"
    else:
        holder = name(outcome.winner_id) if outcome.winner_id else None
        shown = f" ({_cell(holder)})" if holder is not None and not outcome.winner.startswith(holder) else ""
        result = f"**Winner:** {_cell(outcome.winner)}{shown}"
    revised = ", ".join(_cell(name(agent)) for agent in outcome.revised) or "none"
    return [
        "## Correction",
        "Each member checked the next one's answer; a check corrects only when it names a violated requirement or "
        "a wrong step and quotes the answer's words as evidence, and only a corrected answer was revised. Points over "
        "the whole trajectory: +1 an answer given, −1 corrected, +0.5 checked and found sound, +1 a revision that "
        "changed it, +0.5 one that kept it.",
        "### Checks",
        "\n".join(checks) or "_No answer was checked._",
        f"**Revised:** {revised}",
        "\n".join(rows),
        result,
    ]


def verdict_blocks(verdict: Verdict, name: Name) -> list[str]:
    blocks = ["## Verdict", verdict.summary.strip()]
    winner = name(verdict.winner_id) if verdict.winner_id else "none"
    line = f"**Winner:** {_cell(winner)}" + (
        f" — {_cell(verdict.winner_reasoning)}" if verdict.winner_reasoning else ""
    )
    blocks += [line, f"**Debate quality:** {verdict.quality}/100"]
    if verdict.judge_shares_model_with:
        shared = ", ".join(_cell(name(a)) for a in verdict.judge_shares_model_with)
        blocks.append(
            f"_The judge runs on the same model as {shared}; LLM judges are known to prefer their own model's "
            "answers, so read the winner with that in mind._"
        )
    for title, items in (
        ("Key points", [f"{name(k.agent_id)}: {'; '.join(k.points)}" for k in verdict.key_points]),
        ("Areas of agreement", verdict.agreements),
        ("Areas of disagreement", verdict.disagreements),
        ("Insights", verdict.insights),
    ):
        if items:
            blocks += [f"### {title}", "\n".join(f"- {_cell(i)}" for i in items)]
    return blocks


def protocol_facts(state: DebateState) -> list[str]:
    """Header lines: the format and why the debate stopped early, when it did."""
    fmt = debate_format(state)
    facts = [f"- **Format:** {fmt}"]
    if state.stopped_early is not None:
        facts.append(
            f"- **Stopped early:** after round {state.stopped_early.round_number}: {_cell(state.stopped_early.reason)}"
        )
    return facts


def stance_rows(state: DebateState) -> list[str]:
    """``- name: position — persona`` for agents that argue a position or play a persona."""
    return [
        f"- {_cell(a.name)}: {_cell(a.position or 'no position')}" + (f" — {_cell(a.persona)}" if a.persona else "")
        for a in state.agents
        if a.position or a.persona
    ]


def debate_format(state: DebateState) -> str:
    """The deliberation protocol the debate runs (``critique-refine`` when none was saved)."""
    saved = state.saved_config()
    return saved.debate.format if saved is not None else "critique-refine"
