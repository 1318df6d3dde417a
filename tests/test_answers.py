"""Finding the answer in a reply: boxed, stated final answer, last number, and when there is none."""

from __future__ import annotations

import pytest

from dialectic.core.answers import (
    canonical_number,
    extract_answer,
    is_correct,
    normalize_text,
    stated_answer,
    stated_answers,
)


@pytest.mark.parametrize(
    ("text", "answer", "method"),
    [
        ("3+4*5 = 23, so \\boxed{23}. Double-check: 7", "23", "boxed"),
        ("First 12, then $\\boxed{-144}$ and 3 more words with 9", "-144", "boxed"),
        ("\\boxed{\\text{42}}", "42", "boxed"),
        ("\\boxed{x = 17}", "17", "boxed"),
        ("The final answer is 42. Then I checked 7*6.", "42", "final-answer"),
        ("**Final Answer:** 1,234.", "1234", "final-answer"),
        ("Final answer: 3 + 4*5 = 23", "23", "final-answer"),
        ("Final answer:\n\n-7", "-7", "final-answer"),
        ("So the answer is \u2212305.", "-305", "final-answer"),
        ("Answer: 3.50", "3.5", "final-answer"),
        ("We get 12, then 12*3 = 36", "36", "last-number"),
        ("7 + 3 - 2 * 5 = 0 and finally 10-3 = 7", "7", "last-number"),
        ("the total becomes -12", "-12", "last-number"),
        ("x = -5.", "-5", "last-number"),
    ],
)
def test_numeric_extraction(text: str, answer: str, method: str) -> None:
    found = extract_answer(text, "numeric")
    assert (found.answer, found.method) == (answer, method)


@pytest.mark.parametrize("text", ["I cannot tell.", "", "Numbers elude me today", "\\boxed{unknown}"])
def test_unparseable_replies_have_no_answer(text: str) -> None:
    assert extract_answer(text, "numeric").answer is None


def test_a_cut_off_reply_needs_an_explicit_answer() -> None:
    half_done = "Let me think step by step: 12*3 = 36 and then"
    assert extract_answer(half_done, "numeric").answer == "36"
    assert extract_answer(half_done, "numeric", truncated=True).answer is None
    stated = "The final answer is 9. Now let me explain why in great detail, starting with 4"
    assert extract_answer(stated, "numeric", truncated=True).answer == "9"


def test_the_last_boxed_answer_wins_over_earlier_ones() -> None:
    assert extract_answer("At first \\boxed{5}; corrected: \\boxed{6}", "numeric").answer == "6"


def test_exact_mode_extracts_and_normalises_text() -> None:
    assert extract_answer("Thinking...\nFinal answer: The Eiffel Tower.", "exact").answer == "eiffel tower"
    assert extract_answer("\\boxed{Paris}", "exact").answer == "paris"
    assert extract_answer("line one\nParis, France\n", "exact").answer == "paris france"
    assert extract_answer("  \n", "exact").answer is None


def test_numbers_are_canonical() -> None:
    assert canonical_number("1,234") == "1234"
    assert canonical_number("-3.50") == "-3.5"
    assert canonical_number("+7") == "7"
    assert canonical_number("-0") == "0"
    assert canonical_number("$12$") == "12"
    assert canonical_number("twelve") is None
    assert canonical_number("1/2") is None


def test_matching() -> None:
    assert is_correct("-12", "-12", "numeric")
    assert is_correct("1234", "1,234", "numeric")
    assert is_correct("0.3333333", "0.3333333333", "numeric")
    assert not is_correct("0.34", "0.3333", "numeric")
    assert not is_correct("12", "-12", "numeric")
    assert not is_correct(None, "1", "numeric")
    assert is_correct("the paris", "Paris.", "exact")
    assert normalize_text("An Apple, a day!") == "apple day"


def test_the_words_after_final_answer_are_not_part_of_the_answer() -> None:
    assert extract_answer("The final answer is Paris.", "exact").answer == "paris"
    assert extract_answer("My final answer was: 12", "numeric").answer == "12"
    assert extract_answer("So the answer would be Rome", "exact").answer == "rome"


@pytest.mark.parametrize(
    ("text", "answer"),
    [
        ("Answer: 2010-04-14", "2010-04-14"),  # a date stays a date, not its year
        ("\\boxed{2010-04-14}", "2010-04-14"),
        ("So it is April 14, 2010.\nFinal answer: April 14, 2010", "2010-04-14"),
        ("Answer: 25 + 6 + 24 = 55", "55"),
        ("The final answer is 9. Then I checked 4 more.", "9"),
        ("Answer: True", "true"),
        ("Answer: 42\n\nChecked: \\boxed{42}", "42"),
        ("No stated answer here, only 42", None),
    ],
)
def test_the_stated_answer(text: str, answer: str | None) -> None:
    assert stated_answer(text) == answer


@pytest.mark.parametrize(
    ("text", "answer"),
    [
        ('```json\n{ "finalAnswer": "2010-04-17" }\n```', "2010-04-17"),
        ('```json\n{ "answer": "2013-12-25" }\n```', "2013-12-25"),
        ('{"Final Answer": "2028-03-07"}', "2028-03-07"),
        ('{"answer": "True"}', "true"),
        ('{"answer": 42}', "42"),
    ],
)
def test_an_answer_in_a_json_object_is_read_whole(text: str, answer: str) -> None:
    """A judge asked for JSON often answers in an object of its own: its quoted date is the date, not
    its year, and the key ``"answer"`` states it as ``Answer:`` would."""
    assert stated_answer(text) == answer
    assert extract_answer(text, "exact").answer == answer


def test_every_stated_answer_deciding_last() -> None:
    assert stated_answers("Answer: 54\nAnswer: 53\n\\boxed{55}") == ["54", "53", "55"]


@pytest.mark.parametrize(
    "text",
    [
        "Work it out step by step, then state your final answer at the end as \\boxed{your answer}",
        "Answer: <final answer>",
        "\\boxed{<answer>}",
        "The answer is: your answer should be here",
    ],
)
def test_an_echoed_placeholder_is_no_answer(text: str) -> None:
    """A small model (a judge most often) sometimes copies the instructions' template: no answer, so the
    participants' answers decide rather than a tally entry 'your answer'."""
    assert extract_answer(text, "exact").answer is None
    assert stated_answer(text) is None


def test_a_text_answer_beside_a_placeholder_still_counts() -> None:
    assert extract_answer("Template: \\boxed{your answer}\nMine: \\boxed{True}", "exact").answer == "true"
    assert extract_answer("Final answer: answer key", "exact").answer == "answer key"
