"""A judge that states no answer to a question with one right answer, or one against the participants' majority, yields
to the participants' answers."""

from __future__ import annotations

import json
from collections.abc import Callable

from dialectic.core import events as ev
from dialectic.core.answers import extract_answer
from dialectic.engine.judge_answer import majority, own_answer
from dialectic.llm.base import CompletionRequest
from dialectic.llm.scripted import Script, ScriptedReply, default_reply, example_for_schema
from dialectic.testing.harness import Harness, make_config

ROLES = ("architect", "performance", "kiss")
QUESTION = "What is the result of 25+2*3+24?"
ECHO = 'The worked solution in a few short steps, ending with the line "Answer: <final answer>".'
INSTRUCTIONS = 'description: the worked solution, ending with "Answer: <final answer>". State the final answer.'


def responder(judge_says: str, answers: dict[str, str | None]) -> Callable[[CompletionRequest], Script]:
    """Each agent answers ``answers[its role]`` (55 when not given; ``None``: no answer line); the judge says
    ``judge_says``."""

    def respond(request: CompletionRequest) -> Script:
        if request.tag.startswith("synthesis"):
            assert request.json_schema is not None
            value = {**example_for_schema(request.json_schema.schema, name=request.json_schema.name)}
            value["description"] = judge_says
            return ScriptedReply(text=json.dumps(value), structured=value)
        if request.tag.startswith(("proposal", "refinement")):
            answer = answers.get(request.tag.split(":")[-1], "55")
            return ScriptedReply(text="25 + 6 + 24, step by step." + (f"\nAnswer: {answer}" if answer else ""))
        return default_reply(request)

    return respond


def run(harness: Callable[..., Harness], judge_says: str, answers: dict[str, str | None]) -> tuple[str, list[str]]:
    h = harness(responder(judge_says, answers))
    state = h.start(make_config(agents=3, rounds=1, format="critique-refine"), problem=QUESTION)
    assert state.final_solution is not None
    return state.final_solution.description, [e.message for e in h.of(ev.Warning)]


def test_a_judge_that_echoes_its_instructions_yields_to_the_vote(harness: Callable[..., Harness]) -> None:
    description, warnings = run(harness, ECHO, {})
    assert description.splitlines()[-1] == "Answer: 55"
    assert "participants' answers decide: 55 ×3 (3 of 3 agree)" in description
    assert "<final answer>" in description  # the judge's words are kept, quoted
    assert extract_answer(description, "numeric").answer == "55"
    assert any("states no answer of its own" in w and "3 of 3 agree" in w for w in warnings)


def test_a_judge_that_states_an_answer_decides_where_the_participants_have_no_majority(
    harness: Callable[..., Harness],
) -> None:
    description, warnings = run(harness, "25 + 6 + 24 = 55.\nAnswer: 55", {"architect": "54", "performance": "53"})
    assert description == "25 + 6 + 24 = 55.\nAnswer: 55"
    assert not any("states no answer" in w or "theirs stands" in w for w in warnings)


def test_a_judge_answering_in_a_json_object_of_its_own_decides_a_split(harness: Callable[..., Harness]) -> None:
    """The 0.5B judge often writes ``{"answer": "55"}`` in its description: an answer of its own."""
    description, warnings = run(harness, '```json\n{ "answer": "55" }\n```', {"architect": "54", "performance": "53"})
    assert extract_answer(description, "numeric").answer == "55"
    assert not any("states no answer" in w or "theirs stands" in w for w in warnings)


def test_a_judge_does_not_overrule_a_unanimous_panel(harness: Callable[..., Harness]) -> None:
    description, warnings = run(harness, "25 + 6 + 24 = 54.\nAnswer: 54", {})
    assert description.splitlines()[-1] == "Answer: 55"
    assert "The judge's reply answered 54" in description
    assert "against the participants' majority, so theirs stands: 55 ×3 (3 of 3 agree)" in description
    assert extract_answer(description, "numeric").answer == "55"
    assert any("answers 54, against the participants' majority" in w for w in warnings)


def test_a_judge_does_not_overrule_a_majority(harness: Callable[..., Harness]) -> None:
    description, _ = run(harness, "25 + 6 + 24 = 55.\nAnswer: 55", {"architect": "54", "performance": "54"})
    assert description.splitlines()[-1] == "Answer: 54"
    assert "so theirs stands: 54 ×2, 55 ×1 (2 of 3 agree)" in description


def test_a_judge_agreeing_with_the_panel_keeps_its_words(harness: Callable[..., Harness]) -> None:
    description, warnings = run(harness, "25 + 6 + 24 = 55.\nAnswer: 55", {})
    assert description == "25 + 6 + 24 = 55.\nAnswer: 55"
    assert warnings == []


def test_a_majority_counts_the_silent_participants(harness: Callable[..., Harness]) -> None:
    description, _ = run(harness, "Answer: 54", {"architect": None, "kiss": None})  # 1 of 3 is no majority
    assert description == "Answer: 54"
    description, _ = run(harness, "Answer: 54", {"kiss": None})  # 2 of 3 is
    assert description.splitlines()[-1] == "Answer: 55"


def test_the_solution_stands_when_nobody_stated_an_answer(harness: Callable[..., Harness]) -> None:
    said = "The participants voted without reaching consensus."
    description, warnings = run(harness, said, dict.fromkeys(ROLES, None))
    assert description == said
    assert any("no participant stated one either" in w for w in warnings)


def test_a_participant_that_copies_a_phrase_keeps_its_earlier_answer(harness: Callable[..., Harness]) -> None:
    def respond(request: CompletionRequest) -> Script:
        if request.tag.startswith("refinement:kiss"):
            return ScriptedReply(text="Every step checks out.\nAnswer: the answer you derived")
        if request.tag.startswith("proposal:kiss"):
            return ScriptedReply(text="25 + 6 + 24.\nAnswer: 54")
        return responder(ECHO, {})(request)

    h = harness(respond)
    state = h.start(make_config(agents=3, rounds=1, format="critique-refine"), problem=QUESTION)
    assert state.final_solution is not None
    assert "55 ×2, 54 ×1 (2 of 3 agree)" in state.final_solution.description


def test_what_counts_as_an_answer_of_its_own() -> None:
    assert own_answer("So the total is 55.\nAnswer: 55", INSTRUCTIONS) == "55"
    assert own_answer(r"\boxed{2010-04-14}", INSTRUCTIONS) == "2010-04-14"
    assert own_answer("Answer: true", INSTRUCTIONS) == "true"
    assert own_answer("Answer: no", "say no when") == "no"  # one word is never taken for a copy
    assert own_answer("The final answer is 2010-04-14.\nAnswer: <final answer>", INSTRUCTIONS) == "2010-04-14"
    assert own_answer(ECHO, INSTRUCTIONS) is None  # the placeholder, copied
    assert own_answer("The participants voted without reaching consensus: weigh every proposal.", INSTRUCTIONS) is None
    assert own_answer("Answer:", INSTRUCTIONS) is None
    assert own_answer('```json { "finalAnswer": "7" } ```', INSTRUCTIONS) == "7"  # a JSON reply's answer field


def test_a_majority_is_more_than_half_of_two_or_more() -> None:
    assert majority({"a": "55", "b": "55", "c": "55"}) == "55"
    assert majority({"a": "55", "b": "54", "c": "55"}) == "55"
    assert majority({"a": "55", "b": None, "c": "55"}) == "55"
    assert majority({"a": "55", "b": "54", "c": "53"}) is None
    assert majority({"a": "55", "b": "54"}) is None  # two must agree both
    assert majority({"a": "55", "b": None}) is None
    assert majority({"a": "55", "b": "54", "c": "55", "d": "54"}) is None  # half is not more than half
    assert majority({"a": None, "b": None}) is None
    assert majority({"a": "55"}) is None
