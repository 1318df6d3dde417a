"""A debate as a Markdown report, rendered from its stored state. Pure: no I/O.

Contributions, summaries and the synthesis are Markdown written by LLMs and are included
as they are, except for two things that could break the report's own structure
(see :func:`embed`):

* Headings are demoted: a content heading of level ``n`` placed under a report heading
  of level ``b`` becomes level ``min(6, n + b)``, so it always sits below the report's
  heading. Setext headings (text underlined with ``===``/``---``) are rewritten as the
  same demoted ATX headings. Only headings at the top level of the content are
  rewritten; a heading inside a list item or block quote stays inside that container.
* A code fence left open (a reply cut off by the token limit) is closed, so it cannot
  swallow the rest of the report.

Lines inside fenced code blocks and lines indented by four spaces or more are never touched.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from datetime import UTC, datetime

from dialectic.core.domain import (
    Contribution,
    ContributionMetadata,
    ContributionType,
    DebateRound,
    DebateState,
    DebateSummary,
    Participant,
    PromptSource,
    Receipt,
    Solution,
    ToolCallRecord,
)
from dialectic.core.titles import title_line
from dialectic.reporting.deliberation import (
    assessment_blocks,
    correction_blocks,
    council_blocks,
    protocol_facts,
    stance_rows,
    tally_blocks,
    verdict_blocks,
    vote_blocks,
)
from dialectic.reporting.guard import guard_blocks
from dialectic.reporting.team import team_blocks
from dialectic.reporting.usage import totals_blocks
from dialectic.reporting.windows import window_blocks

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_BLOCK_START = re.compile(r"^ {0,3}(?:[-+*>|<]|\d{1,9}[.)])|^ {4}")
_SECTIONS: tuple[tuple[ContributionType, str], ...] = (
    ("proposal", "Proposals"),
    ("critique", "Critiques"),
    ("refinement", "Refinements"),
    ("response", "Turns"),
    ("opening", "Opening statements"),
    ("rebuttal", "Rebuttals"),
    ("closing", "Closing statements"),
    ("ranking", "Rankings"),
)
_MAX_LEVEL = 6

NOT_ANSWERED = "NA"
TRUNCATED_FLAG = "⚠ truncated by the token limit"


def render_report(state: DebateState, *, verbose: bool = False) -> str:
    """The Markdown report of ``state``; ``verbose`` adds per-contribution metadata."""
    people = _People(state)
    blocks: list[str] = [
        *_header(state),
        *_problem(state),
        *_participants(state),
        *team_blocks(state.team),
        *_clarifications(state),
        *_memories(state),
        *_rounds(state, people, verbose),
        *_failed(state, people),
        *_dropped(state, people),
        *(vote_blocks(state.vote, people.name) if state.vote is not None else []),
        *(tally_blocks(state.answer_tally) if state.answer_tally is not None else []),
        *(council_blocks(state.council, people.name) if state.council is not None else []),
        *(correction_blocks(state.correction, people.name) if state.correction is not None else []),
        *_synthesis(state, people, verbose),
        *(verdict_blocks(state.verdict, people.name) if state.verdict is not None else []),
        *window_blocks(state),
        *totals_blocks(state),
    ]
    return "\n\n".join(block for block in blocks if block) + "\n"


def embed(text: str, below: int) -> str:
    """``text`` made safe to sit under a heading of level ``below`` (see the module docstring)."""
    out: list[str] = []
    fence: str | None = None
    in_paragraph = False
    for line in text.strip("\n").splitlines():
        if fence is not None:
            out.append(line)
            stripped = line.strip()
            if stripped.startswith(fence) and not stripped.strip(fence[0]) and len(line) - len(line.lstrip()) < 4:
                fence = None
            continue
        opening = _FENCE.match(line)
        atx = _ATX.match(line)
        setext = _SETEXT.match(line)
        if opening and not (opening.group(1)[0] == "`" and "`" in opening.group(2)):
            fence = opening.group(1)
            out.append(line)
        elif atx:
            out.append(_heading(len(atx.group(1)) + below, atx.group(2) or ""))
        elif setext and in_paragraph:
            level = 1 if setext.group(1)[0] == "=" else 2
            out[-1] = _heading(level + below, out[-1].strip())
        else:
            out.append(line)
            # Inside a paragraph an indented line is a continuation, not a code block.
            starts_block = bool(_BLOCK_START.match(line)) and not (in_paragraph and line.startswith("    "))
            in_paragraph = bool(line.strip()) and not starts_block
            continue
        in_paragraph = False
    if fence is not None:
        out.append(fence)
    return "\n".join(out)


def _heading(level: int, text: str) -> str:
    return f"{'#' * min(level, _MAX_LEVEL)} {text}".rstrip()


def _fenced(text: str, info: str = "text") -> str:
    """``text`` verbatim in a code fence longer than any backtick run inside it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text.strip(chr(10))}\n{fence}"


def _inline(text: str) -> str:
    """``text`` on one line, so it fits in a list item or after a label."""
    flat = " ".join(text.split())
    return "\\" + flat if flat.startswith(("#", ">")) else flat


def _cell(text: str) -> str:
    return _inline(text).replace("|", "\\|") or "—"


def _when(moment: datetime) -> str:
    if moment.tzinfo is None:
        return f"{moment:%Y-%m-%d %H:%M:%S}"
    return f"{moment.astimezone(UTC):%Y-%m-%d %H:%M:%S} UTC"


def _bullets(items: Iterable[str]) -> str:
    return "\n".join(f"- {_inline(item)}" for item in items)


def _first_line(text: str) -> str:
    return title_line(text) or "(no problem statement)"


class _People:
    """Display names for agent ids, from the participants recorded in the state."""

    def __init__(self, state: DebateState) -> None:
        everyone = [*state.agents, *([state.judge] if state.judge else [])]
        self._by_id: dict[str, Participant] = {p.id: p for p in everyone}

    def name(self, agent_id: str) -> str:
        participant = self._by_id.get(agent_id)
        return participant.name if participant else agent_id

    def label(self, agent_id: str, role: str | None = None) -> str:
        participant = self._by_id.get(agent_id)
        role = role or (participant.role if participant else None)
        return f"{self.name(agent_id)} ({role})" if role else self.name(agent_id)

    def contribution(self, c: Contribution) -> str:
        author = self.label(c.agent_id, c.agent_role)
        return f"{author} → {self.label(c.target_agent_id)}" if c.target_agent_id else author


def _header(state: DebateState) -> list[str]:
    facts = [
        f"- **ID:** `{state.id}`",
        f"- **Status:** {state.status}",
        f"- **Created:** {_when(state.created_at)}",
        f"- **Updated:** {_when(state.updated_at)}",
        f"- **Rounds:** {state.current_round}",
        *protocol_facts(state),
    ]
    pending = state.pending_questions()
    if pending:
        facts.append(f"- **Unanswered questions:** {len(pending)}")
    turns = state.pending_turns()
    if turns:
        waiting = ", ".join(f"{_inline(t.agent_name)} (`{_inline(t.key)}`)" for t in turns)
        facts.append(f"- **Human turns waiting:** {waiting}")
    if state.next_node and state.status != "completed":
        facts.append(f"- **Resumes at:** {state.next_node}")
    if state.error:
        facts.append(f"- **Error:** {_inline(state.error)}")
    if state.receipt is not None:
        facts.append(f"- **Receipt:** {receipt_fact(state.receipt)}")
    if state.memory_forgotten_at is not None:
        facts.append(f"- **Memory:** forgotten {_when(state.memory_forgotten_at)}; later debates do not recall it")
    return [f"# Debate report: {_inline(_first_line(state.problem))}", "\n".join(facts)]


def receipt_fact(receipt: Receipt) -> str:
    """The receipt as the report states it: its digest, what it covers, and whether it is signed."""
    signed = ", signed (Ed25519)" if receipt.signature else ""
    return f"`{receipt.algorithm}:{receipt.digest}` ({receipt.count} changes{signed}; check it with `dialectic verify`)"


def _problem(state: DebateState) -> list[str]:
    blocks = ["## Problem", _fenced(state.problem)]
    if state.context and state.context.strip():
        blocks += ["**Context:**", _fenced(state.context)]
    return blocks


def _participant_table(rows: list[tuple[Participant, PromptSource | None]]) -> str:
    lines = ["| Name | Role | Model | Provider | System prompt |", "| --- | --- | --- | --- | --- |"]
    for p, source in rows:
        prompt = source.describe() if source else "—"
        cells = (p.name, p.role, p.model, p.provider, prompt)
        lines.append("| " + " | ".join(_cell(cell) for cell in cells) + " |")
    return "\n".join(lines)


def _participants(state: DebateState) -> list[str]:
    sources = {s.agent_id: s.system_prompt for s in state.prompt_sources.agents}
    agents = (
        _participant_table([(a, sources.get(a.id)) for a in state.agents]) if state.agents else "_No agents recorded._"
    )
    judge_source = state.prompt_sources.judge
    judge = (
        _participant_table([(state.judge, judge_source.system_prompt if judge_source else None)])
        if state.judge
        else "_No judge recorded._"
    )
    stances = stance_rows(state)
    positions = ["### Positions and personas", "\n".join(stances)] if stances else []
    return ["## Agents", agents, *positions, "## Judge", judge]


def _clarifications(state: DebateState) -> list[str]:
    groups = [g for g in state.clarifications if g.items]
    if not groups:
        return []
    blocks = ["## Clarifications"]
    for group in groups:
        blocks.append(f"### {_inline(group.agent_name)} ({_inline(group.role)})")
        for item in group.items:
            answer = item.answer if item.answer is not None else NOT_ANSWERED
            blocks.append(f"**Q ({_inline(item.id)}):** {embed(item.question, 3)}")
            blocks.append(f"**A:** {embed(answer, 3) or NOT_ANSWERED}")
    return blocks


def _memories(state: DebateState) -> list[str]:
    """The past debates given to round 1 (``debate.memory: on``); nothing when memory was off."""
    if state.memories is None:
        return []
    if not state.memories:
        return ["## Memory", "_Memory was on; no similar past debate was found._"]
    lines = []
    for memory in state.memories:
        facts = [f"created {_when(memory.created_at)}", f"similarity {memory.similarity:.2f}"]
        lines.append(f"- `{memory.debate_id}` ({', '.join(facts)}): {_inline(memory.problem)}")
        if memory.verdict:
            lines.append(f"  - Verdict: {_inline(memory.verdict)}")
        if memory.lessons:
            lines.append(f"  - Lessons: {_inline(memory.lessons)}")
    measured = state.memories[0].measured_by
    note = "Past debates given to round 1" + (f" (similarity: {_inline(measured)}):" if measured else ":")
    return ["## Memory", note, "\n".join(lines)]


def _metadata(m: ContributionMetadata) -> str:
    facts: list[str] = []
    if m.tokens_used is not None or m.input_tokens is not None or m.output_tokens is not None:
        facts.append(f"tokens {_total(m):,} (in {m.input_tokens or 0:,}, out {m.output_tokens or 0:,})")
    if m.latency_ms is not None:
        facts.append(f"latency {m.latency_ms:,} ms")
    if m.model:
        facts.append(f"model `{m.model}`")
    if m.finish_reason:
        facts.append(f"finish reason `{m.finish_reason}`")
    if m.attempts != 1:
        facts.append(f"attempts {m.attempts}")
    return "Metadata: " + (" · ".join(facts) if facts else "none recorded")


def _contribution(c: Contribution, people: _People, round_number: int, verbose: bool) -> list[str]:
    title = people.contribution(c)
    if c.metadata.carried_over:
        title += f" (carried over from round {round_number - 1} refinement)"
    if c.metadata.played_by == "person":
        title += " (human)"
    elif c.metadata.played_by == "fallback":
        title += f" (played by the fallback model `{c.metadata.model}`: the deadline passed)"
    blocks = [f"##### {title}"]
    if not c.ok:
        blocks.append(f"**✗ failed:** {_inline(c.error or 'no error recorded')}")
    if c.metadata.truncated:
        blocks.append(f"**{TRUNCATED_FLAG}**")
    if verbose:
        blocks.append(_metadata(c.metadata))
    if c.tool_calls:
        blocks.append(_tool_calls(c.tool_calls))
    blocks.append(embed(c.content, 5))
    return blocks


def _tool_calls(records: list[ToolCallRecord]) -> str:
    """What the speaker read with tools, one item per call (the arguments as code: they are the model's words)."""
    items = [f"- `{_code(r.name)}` {_code_span(r)}" for r in records]
    return f"Tool calls ({len(records)}):\n" + "\n".join(items)


def _code_span(record: ToolCallRecord) -> str:
    arguments = ", ".join(f"{key}={json.dumps(value, ensure_ascii=False)}" for key, value in record.arguments.items())
    outcome = f"error: {_inline(record.error)}" if record.error is not None else f"{record.result_chars:,} chars"
    shown = f" `{_code(arguments)}`" if arguments else ""
    return f"{shown} → {outcome}, {record.latency_ms} ms".lstrip()


def _code(text: str) -> str:
    """``text`` safe inside single backticks (on one line, without backticks)."""
    return " ".join(text.replace("`", "'").split())


def _summary(summary: DebateSummary, below: int, verbose: bool) -> list[str]:
    m = summary.metadata
    blocks = [f"{m.before_chars:,} → {m.after_chars:,} chars ({m.method})"]
    if verbose:
        facts = [
            f"tokens {m.tokens_used:,}" if m.tokens_used is not None else "",
            f"latency {m.latency_ms:,} ms" if m.latency_ms is not None else "",
            f"model `{m.model}`" if m.model else "",
        ]
        blocks.append("Metadata: " + (" · ".join(fact for fact in facts if fact) or "none recorded"))
    return [*blocks, embed(summary.summary, below)]


def _round(r: DebateRound, people: _People, verbose: bool) -> list[str]:
    blocks = [f"### Round {r.round_number}" + (f" — {r.phase}" if r.phase and r.phase != "response" else "")]
    present = {c.type for c in r.contributions}
    shown = [(k, t) for k, t in _SECTIONS if k in present] or list(_SECTIONS[:3])
    for kind, title in shown:
        blocks.append(f"#### {title}")
        found = r.of_type(kind, include_failed=True)
        for c in found:
            blocks += _contribution(c, people, r.round_number, verbose)
        if not found:
            blocks.append("_None._")
    if r.summaries:
        blocks.append("#### Summaries")
        for summary in r.summaries.values():
            blocks.append(f"##### {people.label(summary.agent_id, summary.agent_role)}")
            blocks += _summary(summary, 5, verbose)
    if r.assessment is not None:
        blocks += assessment_blocks(r.assessment, people.name)
    if r.evaluation is not None:
        blocks += ["#### Judge evaluation", f"**Confidence:** {r.evaluation.confidence}/100"]
        if not r.evaluation.structured:
            blocks.append("_The judge's evaluation was not structured; its reasoning is the raw reply._")
        blocks.append(embed(r.evaluation.reasoning, 4))
    return blocks


def _rounds(state: DebateState, people: _People, verbose: bool) -> list[str]:
    blocks = ["## Rounds"]
    for r in state.rounds:
        blocks += _round(r, people, verbose)
        if r.guard is not None:
            blocks += guard_blocks(state, r, people.name(r.guard.by))
    if not state.rounds:
        blocks.append("_No rounds yet._")
    return blocks


def _failed(state: DebateState, people: _People) -> list[str]:
    lines = [
        f"- Round {r.round_number} · {c.type} · {people.contribution(c)}: {_inline(c.error or 'no error recorded')}"
        for r in state.rounds
        for c in r.contributions
        if not c.ok
    ]
    return ["## Failed contributions", "\n".join(lines) if lines else "None"]


def _dropped(state: DebateState, people: _People) -> list[str]:
    """Agents taken out of the debate after their calls kept failing (no section when there are none)."""
    if not state.dropped:
        return []
    lines = [
        f"- {people.label(d.agent_id)}: dropped in round {d.round_number} · {_inline(d.reason)}" for d in state.dropped
    ]
    return ["## Dropped agents", "\n".join(lines)]


def _solution(solution: Solution, people: _People, verbose: bool) -> list[str]:
    blocks = [
        f"**Confidence:** {solution.confidence_text()} · **Synthesized by:** {people.name(solution.synthesized_by)}"
    ]
    if solution.judge_failure is not None:
        blocks.append(
            f"_The judge failed after its retries ({_inline(solution.judge_failure)}): "
            f"{people.name(solution.synthesized_by)} wrote the synthesis in its place (judge.fallback)._"
        )
    if not solution.structured:
        blocks.append("_Note: the judge's output was not structured; the description is its raw reply._")
    if verbose:
        blocks.append(_metadata(solution.metadata))
    if solution.tool_calls:
        blocks.append(_tool_calls(solution.tool_calls))
    blocks.append(embed(solution.description, 3))
    if solution.implementation:
        blocks += ["### Implementation", embed(solution.implementation, 3)]
    for title, items in (
        ("Trade-offs", solution.tradeoffs),
        ("Recommendations", solution.recommendations),
        ("Unfulfilled major requirements", solution.unfulfilled_major_requirements),
        ("Open questions", solution.open_questions),
    ):
        if items:
            blocks += [f"### {title}", _bullets(items)]
    return blocks


def _synthesis(state: DebateState, people: _People, verbose: bool) -> list[str]:
    blocks = ["## Final synthesis"]
    if state.final_solution is not None:
        blocks += _solution(state.final_solution, people, verbose)
    else:
        blocks.append("_No synthesis yet._")
    if state.judge_summary is not None:
        blocks.append("### Judge summary")
        blocks += _summary(state.judge_summary, 3, verbose)
    return blocks


def _total(m: ContributionMetadata) -> int:
    """Tokens of one call: ``tokens_used``, or input plus output when only those were recorded."""
    if m.tokens_used is not None:
        return m.tokens_used
    return (m.input_tokens or 0) + (m.output_tokens or 0)
