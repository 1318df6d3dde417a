"""Packaged prompt templates and role prompts."""

from __future__ import annotations

import os

import pytest
from jinja2 import UndefinedError

from dialectic.agents import templates
from dialectic.agents.deliberation import LabelledRole, LabelledText
from dialectic.agents.templates import builtin_role_prompt, known_roles, phase_template, render

TURN_TEMPLATES = (
    "turn_free_form.md.j2",
    "turn_round_limited.md.j2",
    "turn_common_ground.md.j2",
    "turn_simultaneous.md.j2",
    "turn_opening.md.j2",
    "turn_rebuttal.md.j2",
    "turn_closing.md.j2",
)
ROLES = ("architect", "datamodeling", "generalist", "kiss", "performance", "security", "testing")

CRITIQUES = [
    {
        "author_name": "Simplicity Advocate",
        "author_role": "kiss",
        "content": "Drop the message queue; nothing needs it.",
    },
    {"author_name": "Security Engineer", "author_role": "security", "content": "Tokens are never rotated."},
]
EXISTING = [
    {"id": "q1", "question": "How many users?", "answer": "About 10k daily."},
    {"id": "q2", "question": "Which region?", "answer": ""},
]

# Template name -> representative variables with every optional section filled.
FULL: dict[str, dict] = {
    "propose.md.j2": dict(
        role_name="System Architect",
        problem="Design a URL shortener.",
        context="README: must run on one VM.",
        clarifications="Q: Scale?\nA: 100 req/s.",
        history="Round 1: proposals...",
        history_is_summary=False,
        word_limit=300,
    ),
    "critique.md.j2": dict(
        role_name="Performance Engineer",
        problem="Design a URL shortener.",
        clarifications="Q: Scale?\nA: 100 req/s.",
        history="Round 1: proposals...",
        history_is_summary=False,
        target_name="System Architect",
        target_role="architect",
        proposal="Use Postgres and a Redis cache.",
        word_limit=200,
    ),
    "refine.md.j2": dict(
        role_name="System Architect",
        problem="Design a URL shortener.",
        clarifications="Q: Scale?\nA: 100 req/s.",
        history="Round 1: proposals...",
        history_is_summary=False,
        original="Use Postgres, Redis and a message queue.",
        critiques=CRITIQUES,
        word_limit=300,
    ),
    "summarize.md.j2": dict(
        role_name="System Architect",
        problem="Design a URL shortener.",
        history="Proposal... Critique... Refinement...",
        previous="Round 1: proposed a token bucket; accepted the critique on clock skew.",
        max_length=2500,
    ),
    "clarify.md.j2": dict(
        role_name="Security Engineer",
        problem="Design a URL shortener.",
        context="README: must run on one VM.",
        max_questions=4,
        existing=EXISTING,
    ),
    "judge_synthesize.md.j2": dict(
        problem="Design a URL shortener.",
        clarifications="Q: Scale?\nA: 100 req/s.",
        debate="Round 1... Round 2...",
        debate_is_summary=False,
    ),
    "judge_summarize.md.j2": dict(
        problem="Design a URL shortener.",
        debate="Round 3 refinements...",
        max_length=4000,
    ),
    "judge_assess.md.j2": dict(
        problem="Design a URL shortener.",
        labels=["Participant A", "Participant B"],
        round_number=2,
        debate="Round 2 turns...",
        previous="Quality 6.0/10, trend stable.",
        may_stop=True,
    ),
    "judge_verdict.md.j2": dict(
        problem="Design a URL shortener.",
        labels=["Participant A", "Participant B"],
        debate="The whole debate...",
        debate_is_summary=False,
        vote="Winner: Participant B.",
    ),
    "judge_personas.md.j2": dict(
        problem="Design a URL shortener.",
        participants=[LabelledRole("Agent 1", "System Architect"), LabelledRole("Agent 2", "Security Specialist")],
        strategy="binary",
    ),
    "consensus_guard.md.j2": dict(
        problem="Design a URL shortener.",
        round_number=1,
        debate="Round 1 refinements, all alike...",
        reason="the positions converged in round 1 (similarity 97%), with little evidence",
        word_limit=200,
    ),
    "vote.md.j2": dict(
        role_name="Security Specialist",
        problem="Design a URL shortener.",
        proposals=[LabelledText("Proposal A", "Hash the URL."), LabelledText("Proposal B", "Use a counter.")],
    ),
    **{
        name: dict(
            role_name="System Architect",
            problem="Design a URL shortener.",
            clarifications="- Q (q1): Scale?\n  A: 1k writes/s",
            discussion="### Round 1 — Turn by Security Specialist\nUse signed links.",
            summary="My notes: counters beat hashes here.",
            round_number=2,
            total_rounds=3,
            word_limit=250,
        )
        for name in TURN_TEMPLATES
    },
}

# Variables that may be empty ("absent"), per template.
OPTIONAL: dict[str, dict] = {
    "propose.md.j2": dict(context="", clarifications="", history=""),
    "critique.md.j2": dict(clarifications="", history=""),
    "refine.md.j2": dict(clarifications="", history="", critiques=[]),
    "summarize.md.j2": dict(previous=""),
    "clarify.md.j2": dict(context="", existing=[]),
    "judge_synthesize.md.j2": dict(clarifications=""),
    "judge_summarize.md.j2": {},
    "judge_assess.md.j2": dict(previous=""),
    "judge_verdict.md.j2": dict(vote=""),
    "judge_personas.md.j2": {},
    "consensus_guard.md.j2": {},
    "vote.md.j2": {},
    **{name: dict(clarifications="", discussion="", summary="") for name in TURN_TEMPLATES},
}


def _check_clean(text: str) -> None:
    assert text.strip()
    assert text.endswith("\n") and not text.endswith("\n\n")
    assert "\n\n\n" not in text
    assert "{{" not in text and "{%" not in text
    # The task comes last: it is the final section heading.
    assert "## Task" in text
    assert text.rfind("\n## ") == text.rfind("\n## Task")


@pytest.mark.parametrize("name", sorted(FULL))
def test_renders_with_all_sections(name: str) -> None:
    text = render(name, **FULL[name])
    _check_clean(text)
    for value in FULL[name].values():
        if isinstance(value, str):
            assert value.strip() in text


@pytest.mark.parametrize("name", sorted(FULL))
def test_renders_with_optional_sections_empty(name: str) -> None:
    variables = {**FULL[name], **OPTIONAL[name]}
    text = render(name, **variables)
    _check_clean(text)
    for key, value in FULL[name].items():
        if key in OPTIONAL[name] and isinstance(value, str):
            assert value not in text


def test_optional_sections_disappear() -> None:
    text = render("propose.md.j2", **{**FULL["propose.md.j2"], **OPTIONAL["propose.md.j2"]})
    assert "Context from the user's files" not in text
    assert "Clarifications" not in text
    assert "rounds" not in text
    assert text.count('"""') == 2  # the problem's block only


def test_template_name_suffix_optional() -> None:
    assert render("summarize", **FULL["summarize.md.j2"]) == render("summarize.md.j2", **FULL["summarize.md.j2"])


@pytest.mark.parametrize("name", sorted(FULL))
def test_missing_variable_raises(name: str) -> None:
    for key in FULL[name]:
        variables = {k: v for k, v in FULL[name].items() if k != key}
        if key == "history_is_summary" and not variables.get("history"):
            continue
        with pytest.raises(UndefinedError):
            render(name, **variables)


def test_history_summary_heading() -> None:
    plain = render("propose.md.j2", **FULL["propose.md.j2"])
    summary = render("propose.md.j2", **{**FULL["propose.md.j2"], "history_is_summary": True})
    assert 'The earlier rounds:\n"""\nRound 1: proposals...\n"""' in plain
    assert "Your notes on the earlier rounds:" in summary
    judge = render("judge_synthesize.md.j2", **{**FULL["judge_synthesize.md.j2"], "debate_is_summary": True})
    assert 'A summary of the debate:\n"""\nRound 1... Round 2...\n"""' in judge


def test_propose_asks_for_a_short_structured_answer() -> None:
    text = render("propose.md.j2", **FULL["propose.md.j2"])
    assert text.strip().endswith("At most 300 words.")
    assert "3 to 5 numbered points" in text
    assert "concrete technique or component" in text
    assert "Do not repeat the problem" in text


def test_critique_names_target_and_asks_for_checkable_points() -> None:
    text = render("critique.md.j2", **FULL["critique.md.j2"])
    assert 'The proposal by System Architect (architect):\n"""\nUse Postgres and a Redis cache.\n"""' in text
    assert "checkable" in text
    assert "No praise" in text
    assert "At most 200 words." in text


def test_refine_keeps_position_without_concrete_error() -> None:
    text = render("refine.md.j2", **FULL["refine.md.j2"])
    assert "otherwise keep your position" in text
    assert "Never adopt a claim just because another agent made it" in text
    for i, critique in enumerate(CRITIQUES, start=1):
        heading = f"Critique {i} of your proposal, by {critique['author_name']} ({critique['author_role']}):"
        assert f'{heading}\n"""\n{critique["content"]}\n"""' in text
    # the agent's own proposal comes last before the task: small models copy what they read last
    assert text.index("Your proposal:") > text.index("Critique 2 of your proposal")
    assert text.index("Your proposal:") < text.index("## Task")


def test_refine_without_critiques_asks_for_self_review() -> None:
    text = render("refine.md.j2", **{**FULL["refine.md.j2"], "critiques": []})
    assert "No critiques were received" in text
    assert "Critique" not in text


def test_summarize_states_limit() -> None:
    assert "at most 2500 characters" in render("summarize.md.j2", **FULL["summarize.md.j2"])
    assert "at most 4000 characters" in render("judge_summarize.md.j2", **FULL["judge_summarize.md.j2"])


def test_clarify_first_pass() -> None:
    text = render("clarify.md.j2", **{**FULL["clarify.md.j2"], "existing": []})
    assert "Questions already asked" not in text
    assert "at most 4" in text
    assert '{"questions": [{"text": ' in text
    assert '{"questions": []}' in text


def test_clarify_follow_up() -> None:
    text = render("clarify.md.j2", **FULL["clarify.md.j2"])
    assert "- [q1] Q: How many users?\n  A: About 10k daily." in text
    assert "- [q2] Q: Which region?\n  A: (no answer)" in text
    assert "follow-up" in text
    assert "Do not repeat" in text
    assert '{"questions": []}' in text


def test_judge_synthesize_lists_fields() -> None:
    text = render("judge_synthesize.md.j2", **FULL["judge_synthesize.md.j2"])
    for field in (
        "description",
        "tradeoffs",
        "recommendations",
        "unfulfilledMajorRequirements",
        "openQuestions",
        "confidence",
    ):
        assert f"- {field}:" in text
    assert "not on how many agents" in text
    assert "Do not invent consensus" in text
    assert "Do not restate the problem" in text
    # the problem first, then the debate: with the debate first, the 0.5B judge poured every
    # section into `description` and never closed it
    assert text.index('The problem:\n"""') < text.index('The debate:\n"""') < text.index("## Task")


AGENT_TURNS = ("propose.md.j2", "critique.md.j2", "refine.md.j2")


@pytest.mark.parametrize("name", AGENT_TURNS)
def test_agent_turns_quote_what_they_show_and_end_with_the_task(name: str) -> None:
    """Material in quoted blocks, not under headings: under headings small models echo the prompt."""
    text = render(name, **FULL[name])
    assert text.startswith(f"You are the {FULL[name]['role_name']} in a design debate.")
    assert 'The problem:\n"""\nDesign a URL shortener.\n"""' in text
    assert text.count("\n## ") == 1
    assert "Do not repeat the problem" in text.split("## Task")[1]


def test_structured_debates_name_their_phases() -> None:
    opening = render("turn_opening.md.j2", **FULL["turn_opening.md.j2"])
    assert "opening statement" in opening and "speak at the same time" in opening
    closing = render("turn_closing.md.j2", **FULL["turn_closing.md.j2"])
    assert "closing statement" in closing
    last = render("turn_round_limited.md.j2", **{**FULL["turn_round_limited.md.j2"], "round_number": 3})
    assert "Round 3 of 3: the last one" in last


def test_known_roles() -> None:
    assert known_roles() == ROLES
    assert "judge" not in known_roles()


@pytest.mark.parametrize("role", ROLES + ("judge",))
def test_builtin_role_prompts(role: str) -> None:
    text = builtin_role_prompt(role)
    lines = text.splitlines()
    assert 5 <= len(lines) <= 12
    assert "{{" not in text and "{%" not in text
    assert text == text.strip()


def test_role_lookup_is_case_insensitive() -> None:
    assert builtin_role_prompt(" Security ") == builtin_role_prompt("security")


def test_roles_are_distinct() -> None:
    prompts = {builtin_role_prompt(role) for role in ROLES + ("judge",)}
    assert len(prompts) == len(ROLES) + 1


@pytest.mark.parametrize("role", ["product-manager", "", "../judge", "roles/kiss"])
def test_unknown_role_falls_back_to_generalist(role: str) -> None:
    assert builtin_role_prompt(role) == builtin_role_prompt("generalist")


def test_judge_prompt_mentions_merit() -> None:
    assert "merit" in builtin_role_prompt("judge")


def test_environment_is_cached_and_strict() -> None:
    env = templates.environment()
    assert env is templates.environment()
    assert env.trim_blocks and env.lstrip_blocks and env.keep_trailing_newline


@pytest.mark.parametrize("name", ["propose.md.j2", "refine.md.j2", "judge_synthesize.md.j2", *TURN_TEMPLATES])
def test_the_files_section_tells_of_the_tools_and_lists_the_directory(name: str) -> None:
    listing = "2 text files.\n- README.md (3 lines)\n- src/app.py (40 lines)"
    text = render(name, **FULL[name], files=listing, max_tool_calls=4)
    _check_clean(text)
    section = text.split("## The user's files\n", 1)[1].split("\n\n", 1)[0]
    for tool in ("`list_files`", "`file_read`", "`context_search`"):
        assert tool in section
    assert "at most 4 tool calls" in section and section.rstrip().endswith(listing)
    assert "## The user's files" not in render(name, **FULL[name])  # no tools: no section, no mention


def test_consensus_guard_asks_for_the_objection_nobody_raised() -> None:
    text = render("consensus_guard.md.j2", **FULL["consensus_guard.md.j2"])
    assert "strongest objection" in text and "none of them raised" in text
    assert "at most 200 words" in text
    assert text.index("## Why the consensus is in doubt") < text.index("## Task")


def test_on_a_question_the_guard_checks_the_shared_answer_instead() -> None:
    """An objection invented against answers that agree would talk solvers out of a right answer."""
    assert phase_template("consensus_guard", "reasoning") == "reasoning/consensus_guard.md.j2"
    variables = {**FULL["consensus_guard.md.j2"], "problem": "What is 6*7?"}
    text = render(phase_template("consensus_guard", "reasoning"), **variables)
    _check_clean(text)
    assert text.startswith("## Question\nWhat is 6*7?") and "redoing its working" in text
    assert "first wrong step" in text and "Do not invent an objection" in text
    assert "strongest objection" not in text and "at most 200 words" in text


def test_a_participants_turns_share_their_stable_prefix_for_the_prompt_caches() -> None:
    """Critique and refine of one participant in one round start with the same text: who it is, the problem,
    the clarifications and the earlier rounds (append-only); what the turn asks comes after, so a provider's
    prompt cache serves the shared part of the second call. Nothing that varies comes before the problem."""
    shared = dict(
        role_name="System Architect",
        problem="Design a URL shortener.",
        clarifications="Q: Scale?\nA: 100 req/s.",
        history="Round 1: proposals...",
        history_is_summary=False,
        word_limit=200,
    )
    critique = render(
        "critique.md.j2", **shared, target_name="Performance Engineer", target_role="performance", proposal="Shard."
    )
    refine = render("refine.md.j2", **shared, original="Use Postgres.", critiques=CRITIQUES)
    common = os.path.commonprefix([critique, refine])
    assert common.startswith('You are the System Architect in a design debate.\n\nThe problem:\n"""')
    assert 'Round 1: proposals...\n"""' in common and "Critique" not in common
    assert "Design a URL shortener." in common.split("The earlier rounds")[0]
    later = render("critique.md.j2", **{**shared, "history": "Round 1: proposals...\nRound 2: more..."},
                   target_name="Performance Engineer", target_role="performance", proposal="Shard.")  # fmt: skip
    assert os.path.commonprefix([critique, later]).endswith("Round 1: proposals...\n")  # the history only grows
