"""``format: council`` and ``format: correction`` in the engine, on the scripted model: the calls they make, what
the chair is given, which answers are revised, how the trajectory decides, failures, resume, and the views."""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from dialectic.cli.browse_run import show_lines
from dialectic.core import events as ev
from dialectic.core.config import SystemConfig
from dialectic.core.domain import DebateState
from dialectic.core.errors import ConfigError, ProviderAuthError
from dialectic.engine import DebateRequest
from dialectic.llm.base import CompletionRequest
from dialectic.llm.scripted import Script, ScriptedProvider
from dialectic.reporting.export import export_json
from dialectic.reporting.report import render_report
from dialectic.store.base import DebateStore
from dialectic.testing.harness import Harness, make_config, scripted_judge
from tests.engine.test_resume import Crash, CrashingStore

QUESTION = "What is the result of 25+2*3+24?"
DESIGN = "Design a rate limiter for a public API"


def role_of(request: CompletionRequest) -> str:
    return request.tag.split(":")[1]


def worked(result: int) -> str:
    return f"25 + 6 = 31, 31 + 24 = {result}.\n\n\\boxed{{{result}}}"


def boxed_in(text: str) -> list[str]:
    return re.findall(r"\\boxed\{(\d+)\}", text)


def ranking_by(preference: list[str]) -> Callable[[str], str]:
    """A ranker that orders the responses it is shown by their boxed answer, as ``preference`` orders them."""

    def rank(prompt: str) -> str:
        blocks = re.findall(r"^### (Response [A-Z])\n(.*?)(?=^### |^## Task)", prompt, re.MULTILINE | re.DOTALL)
        order = sorted(blocks, key=lambda block: preference.index(boxed_in(block[1])[-1]))
        return "Each checked.\nFINAL RANKING:\n" + "\n".join(f"{n}. {label}" for n, (label, _) in enumerate(order, 1))

    return rank


ANSWERS = {"architect": 55, "performance": 54, "kiss": 56}


def council_reply(chair: str = "\\boxed{55}") -> Callable[[CompletionRequest], Script]:
    rank = ranking_by(["55", "54", "56"])

    def respond(request: CompletionRequest) -> Script:
        if request.tag.startswith("answer"):
            return worked(ANSWERS[role_of(request)])
        if request.tag.startswith("ranking"):
            return rank(request.last_user)
        if request.tag.startswith("chair"):
            return chair
        raise AssertionError(f"unexpected call {request.tag}")

    return respond


# -- the council --------------------------------------------------------------------------------------


def test_a_council_ranks_counts_borda_and_gives_the_chair_only_the_top_answers(
    harness: Callable[..., Harness],
) -> None:
    h = harness(council_reply())
    state = h.start(make_config(agents=3, format="council"), problem=QUESTION)
    assert state.status == "completed"
    tags = [t.split(":")[0] for t in h.tags()]
    assert Counter(tags) == {"answer": 3, "ranking": 3, "chair": 1}  # 2N + 1 calls
    assert tags[-1] == "chair"
    # every ranker saw every answer anonymised, in its own order, its own answer last
    for call in (c for c in h.provider.calls if c.tag.startswith("ranking")):
        shown = boxed_in(call.last_user)
        assert sorted(shown) == ["54", "55", "56"] and shown[-1] == str(ANSWERS[role_of(call)])
        assert "architect" not in call.last_user.lower() and "Response A" in call.last_user
    council = state.council
    assert council is not None
    assert [(s.agent_id, s.points) for s in council.standings] == [
        ("agent-architect", 6),
        ("agent-performance", 3),
        ("agent-kiss", 0),
    ]
    assert all(r.order == ["agent-architect", "agent-performance", "agent-kiss"] for r in council.rankings)
    assert council.chosen == ["agent-architect", "agent-performance"]
    # the chair is given the top two, best first, and not the last
    chair = next(c for c in h.provider.calls if c.tag.startswith("chair"))
    assert boxed_in(chair.last_user) == ["55", "54"]
    assert chair.last_user.index("### Ranked 1") < chair.last_user.index("### Ranked 2")
    assert "\\boxed{}" in chair.last_user  # asked for a boxed answer, as the bench's chair is
    solution = state.final_solution
    assert solution is not None and solution.synthesized_by == "judge"
    assert solution.description.startswith("**Answer: 55** (the chair's, from the council's top 2 answers; 1 of 3")
    assert state.verdict is None and [r.phase for r in state.rounds] == ["council"]
    assert [e.outcome for e in h.of(ev.CouncilStandings)] == [council]
    phases = [(e.phase, e.expected) for e in h.of(ev.PhaseStarted)]
    assert phases == [("proposal", 3), ("ranking", 3)]
    assert h.store.load(state.id).council == council  # saved as it ran


def test_a_chair_that_states_no_answer_leaves_the_top_ranked_one(harness: Callable[..., Harness]) -> None:
    h = harness(council_reply(chair="I would go with the first response."))
    state = h.start(make_config(agents=3, format="council"), problem=QUESTION)
    solution = state.final_solution
    assert solution is not None and solution.description.startswith("**Answer: 55** (the council's top-ranked")
    assert solution.synthesized_by == "agent-architect"
    assert any("states no answer" in w.message for w in h.of(ev.Warning))


def test_a_council_on_a_design_synthesizes_from_the_top_answers_only(harness: Callable[..., Harness]) -> None:
    texts = {"architect": "Token bucket per client.", "performance": "Sliding log.", "kiss": "Fixed window counter."}
    preference = ["Fixed window counter.", "Token bucket per client.", "Sliding log."]
    base = scripted_judge()

    def respond(request: CompletionRequest) -> Script:
        if request.tag.startswith("proposal"):
            return texts[role_of(request)]
        if request.tag.startswith("ranking"):
            blocks = re.findall(r"^### (Response [A-Z])\n(.*?)\n", request.last_user, re.MULTILINE)
            order = sorted(blocks, key=lambda block: preference.index(block[1]))
            return "FINAL RANKING:\n" + "\n".join(f"{n}. {label}" for n, (label, _) in enumerate(order, 1))
        return base(request)

    h = harness(respond)
    state = h.start(make_config(agents=3, format="council"), problem=DESIGN)
    assert Counter(t.split(":")[0] for t in h.tags()) == {"proposal": 3, "ranking": 3, "synthesis": 1}
    proposal = next(c for c in h.provider.calls if c.tag.startswith("proposal"))
    assert "Answer the question on your own" not in proposal.last_user  # the ordinary proposal, with its role
    assert state.council is not None and state.council.chosen == ["agent-kiss", "agent-architect"]
    synthesis = next(c for c in h.provider.calls if c.tag.startswith("synthesis")).last_user
    assert "The council's top-ranked answers" in synthesis
    assert synthesis.index("Fixed window counter.") < synthesis.index("Token bucket per client.")
    assert "Sliding log." not in synthesis
    assert state.final_solution is not None and state.final_solution.synthesized_by == "judge"


def test_a_failing_member_is_skipped_and_too_few_answers_fail_resumably(harness: Callable[..., Harness]) -> None:
    def one_fails(request: CompletionRequest) -> Script:
        if request.tag == "answer:kiss":
            return ProviderAuthError("key revoked", provider="scripted")
        return council_reply()(request)

    h = harness(one_fails)
    state = h.start(make_config(agents=3, format="council"), problem=QUESTION)
    assert state.status == "completed"
    assert any("Kiss failed answering" in w.message for w in h.of(ev.Warning))
    assert state.council is not None and [s.agent_id for s in state.council.standings] == [
        "agent-architect",
        "agent-performance",
    ]

    def two_fail(request: CompletionRequest) -> Script:
        if request.tag in ("answer:kiss", "answer:performance"):
            return ProviderAuthError("key revoked", provider="scripted")
        return council_reply()(request)

    failing = harness(two_fail)
    with pytest.raises(ProviderAuthError) as failure:
        failing.start(make_config(agents=3, format="council"), problem=QUESTION)
    assert failure.value.debate_id is not None
    first = failing.store.load(failure.value.debate_id)
    assert first.status == "failed" and len(first.rounds[0].contributions) == 1
    resumed = failing.resume(first.id, provider=ScriptedProvider(council_reply()))
    assert resumed.status == "completed"
    assert Counter(t.split(":")[0] for t in failing.tags()) == {"answer": 2, "ranking": 3, "chair": 1}


def test_a_council_of_one_is_refused_before_any_call(harness: Callable[..., Harness]) -> None:
    h = harness(council_reply())
    with pytest.raises(ConfigError, match="format council needs at least 2 agents"):
        h.start(make_config(agents=1, format="council"), problem=QUESTION)
    assert h.provider.calls == []


# -- the correction-biased critique ---------------------------------------------------------------------

FIRST = {"architect": 54, "performance": 54, "kiss": 55}
"""Two of three answer 54: a majority, which two correcting critiques take apart."""


def correction_reply(request: CompletionRequest) -> Script:
    prompt = request.last_user
    if request.tag.startswith("answer"):
        return worked(FIRST[role_of(request)])
    if request.tag.startswith("check"):
        checked = boxed_in(prompt.split("## An answer to check", 1)[1])[-1]
        if role_of(request) == "performance":  # checks kiss's 55: a violation whose quote is not in the answer
            return "Violation: the sum is wrong\nEvidence: 31 + 24 = 56"
        assert checked == "54"
        return "Violation: the last addition is wrong\nEvidence: 31 + 24 = 54"
    if request.tag.startswith("revision"):
        return "The reviewer is wrong: 31 + 24 = 54.\n\n\\boxed{54}"  # defended, kept
    raise AssertionError(f"unexpected call {request.tag}")


def test_only_a_corrected_answer_is_revised_and_the_trajectory_beats_the_last_majority(
    harness: Callable[..., Harness],
) -> None:
    h = harness(correction_reply)
    state = h.start(make_config(agents=3, format="correction"), problem=QUESTION)
    assert state.status == "completed"
    tags = h.tags()
    assert Counter(t.split(":")[0] for t in tags) == {"answer": 3, "check": 3, "revision": 2}  # no judge call
    assert sorted(t for t in tags if t.startswith("revision")) == ["revision:architect", "revision:performance"]
    revise = next(c for c in h.provider.calls if c.tag == "revision:architect").last_user
    assert "Violation: the last addition is wrong" in revise and "Evidence: 31 + 24 = 54" in revise
    assert "\\boxed{}" in revise
    outcome = state.correction
    assert outcome is not None
    assert [(c.critic_id, c.target_id, c.verdict) for c in outcome.checks] == [
        ("agent-architect", "agent-performance", "corrects"),
        ("agent-performance", "agent-kiss", "holds"),  # its quote is not in the answer
        ("agent-kiss", "agent-architect", "corrects"),
    ]
    assert outcome.revised == ["agent-architect", "agent-performance"]
    # the last round says 54, 54, 55: a majority for 54; the whole trajectory says 55
    finals = [boxed_in(c.content)[-1] for c in state.rounds[0].contributions if c.type == "refinement"]
    assert finals == ["54", "54"]
    assert outcome.points == {"54": 1.0, "55": 1.5}
    assert outcome.winner == "55" and outcome.winner_id == "agent-kiss"
    solution = state.final_solution
    assert solution is not None and solution.synthesized_by == "correction"
    assert solution.description.startswith("**Answer: 55** (1.5 points over the whole trajectory; the others: 54 1)")
    assert "31 + 24 = 55" in solution.description
    refinements = state.rounds[0].of_type("refinement")
    assert {c.agent_id for c in refinements} == {"agent-architect", "agent-performance"}
    assert all(c.target_agent_id is not None for c in state.rounds[0].of_type("critique"))
    assert [(e.phase, e.expected) for e in h.of(ev.PhaseStarted)] == [
        ("proposal", 3),
        ("critique", 3),
        ("refinement", 2),
    ]
    assert h.store.load(state.id).correction == outcome


def test_a_correction_on_a_design_builds_on_the_winning_text(harness: Callable[..., Harness]) -> None:
    h = harness(scripted_judge())  # every check corrects, every member revises
    state = h.start(make_config(agents=2, format="correction"), problem=DESIGN)
    assert Counter(t.split(":")[0] for t in h.tags()) == {"proposal": 2, "check": 2, "revision": 2, "synthesis": 1}
    outcome = state.correction
    assert outcome is not None and outcome.winner == "Architect (revised)" and outcome.winner_id == "agent-architect"
    assert outcome.points == {
        "Architect": 0.0,
        "Architect (revised)": 1.0,
        "Performance": 0.0,
        "Performance (revised)": 1.0,
    }
    synthesis = next(c for c in h.provider.calls if c.tag.startswith("synthesis")).last_user
    assert "Architect's final text won: build the solution on it" in synthesis


def test_failing_revisions_are_skipped_and_the_trajectories_still_decide(harness: Callable[..., Harness]) -> None:
    def fails_at_revisions(request: CompletionRequest) -> Script:
        if request.tag.startswith("revision"):
            return ProviderAuthError("key revoked", provider="scripted")
        return correction_reply(request)

    h = harness(fails_at_revisions)
    state = h.start(make_config(agents=3, format="correction"), problem=QUESTION)
    # both revisions failed: skipped, with warnings; the trajectories without them still decide
    assert state.status == "completed" and sum("failed revising" in w.message for w in h.of(ev.Warning)) == 2
    assert state.correction is not None and state.correction.points == {"54": 0.0, "55": 1.5}


# -- resume after a crash at every step, on a question (the chair, the decision without a judge) ----------


async def _start_quietly(h: Harness, config: SystemConfig) -> None:
    def ignore_crash(loop: asyncio.AbstractEventLoop, context: dict[str, object]) -> None:
        if not isinstance(context.get("exception"), Crash):
            loop.default_exception_handler(context)

    asyncio.get_running_loop().set_exception_handler(ignore_crash)
    await h.engine().start(DebateRequest(problem=QUESTION, config=config, config_dir=Path(".")))


@pytest.mark.parametrize(
    ("name", "respond"), [("council", council_reply()), ("correction", correction_reply)], ids=["council", "correction"]
)
def test_a_crash_at_every_step_then_resume_repeats_no_saved_call(
    store: DebateStore, name: str, respond: Callable[[CompletionRequest], Script]
) -> None:
    config = make_config(agents=3, format=name)
    counting = CrashingStore(store, crash_after=10_000)
    clean = Harness(store=counting, provider=ScriptedProvider(respond))  # type: ignore[arg-type]
    reference = asyncio.run(clean.engine().start(DebateRequest(problem=QUESTION, config=config, config_dir=Path("."))))
    reference_tags = Counter(clean.tags())
    assert reference.status == "completed" and counting.appends > 8
    for crash_after in range(1, counting.appends):
        crashing = Harness(store=CrashingStore(store, crash_after), provider=ScriptedProvider(respond))  # type: ignore[arg-type]
        with pytest.raises(Crash):
            asyncio.run(_start_quietly(crashing, config))
        debate_id = store.list(limit=1)[0].id
        before = store.load(debate_id)
        kept = sum(1 for c in before.all_contributions() if c.ok) + (before.final_solution is not None)
        resumed = Harness(store=store, provider=ScriptedProvider(respond))
        after = resumed.resume(debate_id)
        assert after.status == "completed", f"crash after append {crash_after}"
        assert len(resumed.provider.calls) == len(clean.provider.calls) - kept, f"crash after append {crash_after}"
        # what ran before the crash and what the resume asked add up to the clean run: nothing asked twice
        assert Counter(crashing.tags()) + Counter(resumed.tags()) >= reference_tags
        saved = Counter(e.kind for e in store.load(debate_id).ledger if not e.discarded)
        assert sum(saved.values()) == sum(reference_tags.values()), f"crash after append {crash_after}"
        assert after.council == reference.council and after.correction == reference.correction
        assert after.final_solution is not None and reference.final_solution is not None
        assert after.final_solution.description == reference.final_solution.description


# -- the views ---------------------------------------------------------------------------------------------


def test_show_report_and_export_show_the_council(harness: Callable[..., Harness]) -> None:
    h = harness(council_reply())
    state = h.start(make_config(agents=3, format="council"), problem=QUESTION)
    shown = "\n".join(show_lines(state))
    assert "Format: council" in shown
    assert "Council (Borda): Architect 6, Performance 3, Kiss 0 — the chair is given Architect, Performance" in shown
    assert "  Kiss ranked: Architect > Performance > Kiss" in shown
    assert "Round 1 (council): 3 proposals, 3 rankings" in shown
    report = render_report(state)
    assert "## Council" in report and "| Architect | 6 | yes |" in report and "| Kiss | 0 | no |" in report
    assert "**The chair was given:** Architect, Performance (best first)" in report
    assert "- Performance: Architect > Performance > Kiss (shown as Response A = Kiss" in report
    assert "#### Rankings" in report
    assert DebateState.model_validate_json(export_json(state)).council == state.council  # the export reads back


def test_show_report_and_export_show_the_correction(harness: Callable[..., Harness]) -> None:
    h = harness(correction_reply)
    state = h.start(make_config(agents=3, format="correction"), problem=QUESTION)
    shown = "\n".join(show_lines(state))
    assert "Correction: 2 of 3 checks corrected; points 54 1, 55 1.5 — 55 wins (Kiss)" in shown
    assert "  Architect → Performance: corrects — violation: the last addition is wrong; evidence: “31 + 24 = 54”" in (
        shown
    )
    assert "  Performance → Kiss: holds" in shown
    report = render_report(state)
    assert "## Correction" in report and "| 55 | 1.5 |" in report and "**Winner:** 55 (Kiss)" in report
    assert "- Performance → Kiss: holds" in report and "**Revised:** Architect, Performance" in report
    assert DebateState.model_validate_json(export_json(state)).correction == state.correction


def test_the_python_api_runs_both_formats_by_name_and_its_result_carries_their_outcome() -> None:
    from dialectic import Agent, Debate, Judge
    from dialectic.llm.registry import ProviderPool

    agents = [Agent("architect"), Agent("performance"), Agent("kiss")]
    council = ProviderPool(overrides={"scripted": ScriptedProvider(council_reply())})
    debate = Debate(
        agents=agents, judge=Judge(), provider="scripted", format="council", store=":memory:", providers=council
    )
    result = debate.run_sync(QUESTION)
    assert result.council is not None and len(result.council.chosen) == 2 and result.correction is None
    assert result.solution is not None and result.solution.startswith("**Answer: 55**")
    correction = ProviderPool(overrides={"scripted": ScriptedProvider(correction_reply)})
    debate = Debate(
        agents=agents, judge=Judge(), provider="scripted", format="correction", store=":memory:", providers=correction
    )
    result = debate.run_sync(QUESTION)
    assert result.correction is not None and result.correction.winner == "55" and result.council is None
