"""The Markdown report, rendered from states built by folding real change records."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from dialectic.core.changes import (
    AnswersRecorded,
    CallRecorded,
    Change,
    ContributionRecorded,
    CursorMoved,
    DebateCreated,
    EvaluationRecorded,
    JudgeSummaryRecorded,
    QuestionsAsked,
    RoundStarted,
    SolutionRecorded,
    StatusChanged,
    SummaryRecorded,
    fold,
)
from dialectic.core.domain import (
    AgentClarifications,
    AgentPromptSources,
    ClarificationItem,
    Contribution,
    ContributionMetadata,
    ContributionType,
    DebateState,
    DebateSummary,
    LedgerEntry,
    Participant,
    PromptSource,
    PromptSources,
    RoundEvaluation,
    Solution,
    SummaryMetadata,
)
from dialectic.reporting.report import embed, render_report

T0 = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)
ARCHITECT = "agent-architect"
SECURITY = "agent-security"

PROPOSAL_WITH_HEADINGS = """# Token bucket

Use Redis.

## Rounds

Details
=======

```python
# a comment, not a heading
bucket = 10
```"""

TRUNCATED_PROPOSAL = """Sliding window:

```python
def allow(request):
    # check the window"""


def at(minutes: int) -> datetime:
    return T0 + timedelta(minutes=minutes)


def created(problem: str = "Design a rate limiter\nfor a public API", context: str | None = None) -> DebateCreated:
    state = DebateState(
        id="deb-20240501-090000-ABCD",
        problem=problem,
        context=context,
        agents=[
            Participant(id=ARCHITECT, name="System Architect", role="architect", model="gpt-4o", provider="openai"),
            Participant(id=SECURITY, name="Security Expert", role="security", model="claude-3", provider="anthropic"),
        ],
        judge=Participant(id="judge-main", name="Technical Judge", role="generalist", model="o1", provider="openai"),
        prompt_sources=PromptSources(
            agents=[
                AgentPromptSources(
                    agent_id=ARCHITECT,
                    role="architect",
                    system_prompt=PromptSource(kind="file", path="prompts/architect.md"),
                ),
                AgentPromptSources(agent_id=SECURITY, role="security"),
            ],
            judge=AgentPromptSources(agent_id="judge-main", role="generalist"),
        ),
        created_at=T0,
        updated_at=T0,
    )
    return DebateCreated(state=state, at=T0)


def said(
    round_number: int,
    agent: str,
    role: str,
    kind: ContributionType,
    content: str,
    *,
    target: str | None = None,
    status: str = "ok",
    error: str | None = None,
    **metadata: Any,
) -> ContributionRecorded:
    return ContributionRecorded(
        round_number=round_number,
        contribution=Contribution(
            agent_id=agent,
            agent_role=role,
            type=kind,
            content=content,
            target_agent_id=target,
            status=status,
            error=error,
            metadata=ContributionMetadata(**metadata),
        ),
    )  # type: ignore[arg-type]


def questions(iteration: int, agent: str, name: str, role: str, *items: tuple[str, str]) -> QuestionsAsked:
    return QuestionsAsked(
        iteration=iteration,
        groups=[
            AgentClarifications(
                agent_id=agent,
                agent_name=name,
                role=role,
                items=[ClarificationItem(id=qid, question=text, iteration=iteration) for qid, text in items],
            )
        ],
    )


def summary(agent: str, role: str, text: str, before: int, after: int, tokens: int, latency: int) -> DebateSummary:
    return DebateSummary(
        agent_id=agent,
        agent_role=role,
        summary=text,
        metadata=SummaryMetadata(
            before_chars=before, after_chars=after, tokens_used=tokens, latency_ms=latency, model="gpt-4o"
        ),
    )


def full_debate() -> list[Change]:
    """Known numbers: see test_totals for the sums."""
    return [
        created(context="We run nginx and Redis."),
        StatusChanged(status="running", at=at(1)),
        questions(1, ARCHITECT, "System Architect", "architect", ("q1", "Expected peak QPS?")),
        questions(1, SECURITY, "Security Expert", "security", ("q2", "Authenticated clients only?")),
        AnswersRecorded(answers={"q1": "About 10k", "q2": "NA"}),
        questions(2, ARCHITECT, "System Architect", "architect", ("q3", "Multi-region?")),
        RoundStarted(round_number=1),
        said(
            1,
            ARCHITECT,
            "architect",
            "proposal",
            PROPOSAL_WITH_HEADINGS,
            input_tokens=100,
            output_tokens=50,
            tokens_used=150,
            latency_ms=1000,
            model="gpt-4o",
            finish_reason="stop",
        ),
        said(
            1,
            SECURITY,
            "security",
            "proposal",
            TRUNCATED_PROPOSAL,
            input_tokens=120,
            output_tokens=80,
            tokens_used=200,
            latency_ms=2000,
            truncated=True,
            finish_reason="length",
        ),
        said(
            1,
            ARCHITECT,
            "architect",
            "critique",
            "The window costs memory.",
            target=SECURITY,
            input_tokens=10,
            output_tokens=20,
            tokens_used=30,
            latency_ms=500,
        ),
        said(
            1,
            SECURITY,
            "security",
            "critique",
            "",
            target=ARCHITECT,
            status="failed",
            error="provider timed out\nafter 3 attempts",
            latency_ms=3000,
        ),
        said(
            1,
            ARCHITECT,
            "architect",
            "refinement",
            "Token bucket, per region.",
            input_tokens=40,
            output_tokens=60,
            tokens_used=100,
            latency_ms=1500,
        ),
        SummaryRecorded(round_number=1, summary=summary(ARCHITECT, "architect", "Short history.", 6000, 2500, 70, 700)),
        EvaluationRecorded(round_number=1, evaluation=RoundEvaluation(confidence=65, reasoning="Converging.")),
        RoundStarted(round_number=2),
        said(2, ARCHITECT, "architect", "proposal", "Token bucket, per region.", carried_over=True),
        JudgeSummaryRecorded(summary=summary("judge-main", "generalist", "All agree.", 9000, 1000, 90, 900)),
        SolutionRecorded(
            solution=Solution(
                description="# Use a token bucket\nBacked by Redis.",
                tradeoffs=["Redis becomes critical"],
                recommendations=["Start with 100 req/s per key", "Alert on Redis latency"],
                open_questions=["Burst size?"],
                confidence=85,
                synthesized_by="judge-main",
                metadata=ContributionMetadata(input_tokens=300, output_tokens=200, tokens_used=500, latency_ms=4000),
            )
        ),
        StatusChanged(status="completed", at=at(30)),
        CursorMoved(next_node=None, at=at(31)),
    ]


def report(changes: list[Change], *, verbose: bool = False) -> str:
    return render_report(fold(changes), verbose=verbose)


@pytest.fixture
def text() -> str:
    return report(full_debate())


def lines_after(text: str, marker: str, count: int) -> list[str]:
    """The ``count`` non-blank lines following the line equal to ``marker``."""
    lines = text.splitlines()
    rest = lines[lines.index(marker) + 1 :]
    return [line for line in rest if line.strip()][:count]


def test_all_sections_in_order(text: str) -> None:
    expected = [
        "# Debate report: Design a rate limiter",
        "## Problem",
        "## Agents",
        "## Judge",
        "## Clarifications",
        "## Rounds",
        "### Round 1",
        "#### Proposals",
        "#### Critiques",
        "#### Refinements",
        "#### Summaries",
        "#### Judge evaluation",
        "### Round 2",
        "## Failed contributions",
        "## Final synthesis",
        "### Trade-offs",
        "### Recommendations",
        "### Open questions",
        "### Judge summary",
        "## Totals",
    ]
    lines = text.splitlines()
    positions = [lines.index(heading) for heading in expected]
    assert positions == sorted(positions)
    assert "### Unfulfilled major requirements" not in lines
    assert "- **ID:** `deb-20240501-090000-ABCD`" in lines
    assert "- **Status:** completed" in lines
    assert "- **Created:** 2024-05-01 09:00:00 UTC" in lines
    assert "- **Updated:** 2024-05-01 09:31:00 UTC" in lines


def test_problem_and_context_are_fenced(text: str) -> None:
    assert lines_after(text, "## Problem", 3) == ["```text", "Design a rate limiter", "for a public API"]
    assert "We run nginx and Redis." in text


def test_a_problem_with_backticks_gets_a_longer_fence() -> None:
    out = report([created(problem="Fix this:\n```\n# not a heading\n```")])
    assert lines_after(out, "## Problem", 2) == ["````text", "Fix this:"]
    assert "# not a heading" in out.splitlines()


def test_agents_and_judge_tables(text: str) -> None:
    lines = text.splitlines()
    assert "| System Architect | architect | gpt-4o | openai | prompts/architect.md |" in lines
    assert "| Security Expert | security | claude-3 | anthropic | built-in default |" in lines
    assert lines_after(text, "## Judge", 3)[2] == "| Technical Judge | generalist | o1 | openai | built-in default |"


def test_clarifications_grouped_per_agent_with_na(text: str) -> None:
    assert lines_after(text, "### System Architect (architect)", 4) == [
        "**Q (q1):** Expected peak QPS?",
        "**A:** About 10k",
        "**Q (q3):** Multi-region?",
        "**A:** NA",
    ]
    assert lines_after(text, "### Security Expert (security)", 2) == [
        "**Q (q2):** Authenticated clients only?",
        "**A:** NA",
    ]


def test_contributions_by_type(text: str) -> None:
    lines = text.splitlines()
    assert "##### System Architect (architect) → Security Expert (security)" in lines
    assert "##### Security Expert (security) → System Architect (architect)" in lines
    assert "##### System Architect (architect) (carried over from round 1 refinement)" in lines
    assert lines_after(text, "#### Refinements", 2) == [
        "##### System Architect (architect)",
        "Token bucket, per region.",
    ]
    assert lines_after(text, "#### Summaries", 3) == [
        "##### System Architect (architect)",
        "6,000 → 2,500 chars (length-based)",
        "Short history.",
    ]
    assert lines_after(text, "#### Judge evaluation", 2) == ["**Confidence:** 65/100", "Converging."]


def test_failed_and_truncated_are_flagged(text: str) -> None:
    critique = "##### Security Expert (security) → System Architect (architect)"
    assert lines_after(text, critique, 1) == ["**✗ failed:** provider timed out after 3 attempts"]
    assert lines_after(text, "##### Security Expert (security)", 1) == ["**⚠ truncated by the token limit**"]
    assert lines_after(text, "## Failed contributions", 2) == [
        "- Round 1 · critique · Security Expert (security) → System Architect (architect): "
        "provider timed out after 3 attempts",
        "## Final synthesis",
    ]


def test_headings_in_content_are_demoted(text: str) -> None:
    lines = text.splitlines()
    assert "# Token bucket" not in lines and "###### Token bucket" in lines
    assert lines.count("## Rounds") == 1 and "###### Rounds" in lines
    assert "###### Details" in lines and "=======" not in lines
    assert "# a comment, not a heading" in lines
    assert "#### Use a token bucket" in lines


def test_an_unclosed_fence_is_closed(text: str) -> None:
    lines = text.splitlines()
    start = lines.index("    # check the window")
    assert lines[start + 1 : start + 3] == ["```", ""]
    assert embed("text\n~~~~\ncode", 2) == "text\n~~~~\ncode\n~~~~"


@pytest.mark.parametrize(
    ("content", "below", "expected"),
    [
        ("# A\n## B ##\n####### seven", 2, "### A\n#### B\n####### seven"),
        ("#hashtag\n    # indented code", 1, "#hashtag\n    # indented code"),
        ("Title\n---\n\n---", 1, "### Title\n\n---"),
        ("- item\n---", 1, "- item\n---"),
        ("```\n# kept\n```\n# demoted", 5, "```\n# kept\n```\n###### demoted"),
    ],
)
def test_embed(content: str, below: int, expected: str) -> None:
    assert embed(content, below) == expected


def test_report_structure_survives_content() -> None:
    markdown_it = pytest.importorskip("markdown_it")
    tokens = markdown_it.MarkdownIt("commonmark").parse(report(full_debate()))
    top = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open" and t.tag in ("h1", "h2")]
    assert top == [
        "Debate report: Design a rate limiter",
        "Problem",
        "Agents",
        "Judge",
        "Clarifications",
        "Rounds",
        "Failed contributions",
        "Final synthesis",
        "Totals",
    ]


def test_final_synthesis(text: str) -> None:
    assert lines_after(text, "## Final synthesis", 3) == [
        "**Confidence:** 85/100 · **Synthesized by:** Technical Judge",
        "#### Use a token bucket",
        "Backed by Redis.",
    ]
    assert lines_after(text, "### Recommendations", 2) == ["- Start with 100 req/s per key", "- Alert on Redis latency"]
    assert lines_after(text, "### Judge summary", 2) == ["9,000 → 1,000 chars (length-based)", "All agree."]
    assert "not structured" not in text


def test_unstructured_solution_is_noted() -> None:
    unstructured = Solution(description="raw judge reply", structured=False)
    out = report([created(), SolutionRecorded(solution=unstructured)])
    assert "_Note: the judge's output was not structured; the description is its raw reply._" in out
    assert "**Synthesized by:** judge" in out


def test_totals(text: str) -> None:
    """A debate saved before the ledger: its calls are rebuilt from the metadata (a bare total counts as input)."""
    assert lines_after(text, "## Totals", 6) == [
        "- **Contributions:** 6 (5 ok, 1 failed, 1 truncated)",
        "- **Failed:** 1",
        "- **Calls:** 8 (1 failed)",
        "- **Tokens:** 730 input · 410 output · 1,140 total",
        "- **Cost:** unknown",
        "- **Latency:** 13,600 ms total · 1,700 ms mean over 8 calls",
    ]


def test_totals_and_cost_come_from_the_ledger() -> None:
    entries = [
        LedgerEntry(
            kind="proposal",
            agent_id=ARCHITECT,
            provider="openai",
            model="gpt-4o",
            input_tokens=1000,
            output_tokens=500,
            cached_input_tokens=200,
            requests=1,
            attempts=2,
            latency_ms=800,
            cost_usd=0.0072,
        ),
        LedgerEntry(
            kind="vote",
            agent_id=SECURITY,
            provider="openai",
            model="gpt-4o",
            input_tokens=300,
            output_tokens=20,
            requests=1,
            attempts=1,
            latency_ms=200,
            cost_usd=0.00095,
        ),
    ]
    out = report([created(), *(CallRecorded(entry=e) for e in entries)])
    assert lines_after(out, "## Totals", 6)[2:] == [
        "- **Calls:** 2 (3 provider requests tried)",
        "- **Tokens:** 1,300 input · 520 output · 200 cached · 1,820 total",
        "- **Cost:** $0.00815",
        "- **Latency:** 1,000 ms total · 500 ms mean over 2 calls",
    ]
    assert "- **Prompt cache:** prompt tokens served from cache: 15%" in out  # 200 of 1,300
    assert lines_after(out, "### Usage by call", 4) == [
        "| Call | Calls | Input tokens | Output tokens | Cached | Cost |",
        "|---|--:|--:|--:|--:|--:|",
        "| proposal | 1 | 1,000 | 500 | 200 | $0.0072 |",
        "| vote | 1 | 300 | 20 | 0 | $0.00095 |",
    ]


def test_verbose_adds_metadata(text: str) -> None:
    verbose = report(full_debate(), verbose=True)
    assert "Metadata:" not in text
    assert lines_after(verbose, "##### System Architect (architect)", 1) == [
        "Metadata: tokens 150 (in 100, out 50) · latency 1,000 ms · model `gpt-4o` · finish reason `stop`",
    ]
    assert "Metadata: tokens 500 (in 300, out 200) · latency 4,000 ms" in verbose
    assert "Metadata: tokens 70 · latency 700 ms · model `gpt-4o`" in verbose


def test_a_new_debate_renders() -> None:
    out = report([created()])
    lines = out.splitlines()
    assert "- **Status:** pending" in lines
    assert "## Clarifications" not in lines
    assert lines_after(out, "## Rounds", 1) == ["_No rounds yet._"]
    assert lines_after(out, "## Failed contributions", 1) == ["None"]
    assert lines_after(out, "## Final synthesis", 1) == ["_No synthesis yet._"]
    assert "- **Latency:** none recorded" in lines
    assert "- **Tokens:** 0 input · 0 output · 0 total" in lines


def test_a_suspended_debate_with_pending_questions_renders() -> None:
    out = report(
        [
            created(),
            StatusChanged(status="running"),
            questions(1, ARCHITECT, "System Architect", "architect", ("q1", "Expected QPS?"), ("q2", "Budget?")),
            StatusChanged(status="suspended"),
            CursorMoved(next_node="clarification"),
        ]
    )
    lines = out.splitlines()
    assert "- **Status:** suspended" in lines
    assert "- **Unanswered questions:** 2" in lines
    assert "- **Resumes at:** clarification" in lines
    assert lines_after(out, "### System Architect (architect)", 4) == [
        "**Q (q1):** Expected QPS?",
        "**A:** NA",
        "**Q (q2):** Budget?",
        "**A:** NA",
    ]


def test_unknown_agents_fall_back_to_their_id() -> None:
    out = report(
        [
            created(),
            RoundStarted(round_number=1),
            said(1, "agent-ghost", "kiss", "critique", "Too complex.", target="agent-other"),
        ]
    )
    assert "##### agent-ghost (kiss) → agent-other" in out.splitlines()


def test_failed_debate_shows_its_error() -> None:
    out = report([created(), StatusChanged(status="failed", error="all agents failed in round 1")])
    assert "- **Error:** all agents failed in round 1" in out.splitlines()
