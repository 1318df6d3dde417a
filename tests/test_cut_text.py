"""Trimming a reply cut off by the token limit to its last complete sentence or list item."""

from __future__ import annotations

import pytest

from dialectic.llm.cut_text import trim_to_complete


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # cut inside the second item: the first, complete, is kept
        (
            "1. **Sliding window**: count requests per key.\n\n2. **Redis**: store the coun",
            "1. **Sliding window**: count requests per key.",
        ),
        # cut inside a paragraph: up to the last full sentence ("e.g." is not one)
        (
            "Use a token bucket, e.g. in Redis. It answers in 1 ms. Then the las",
            "Use a token bucket, e.g. in Redis. It answers in 1 ms.",
        ),
        # list items without final periods end where the next item starts
        ("1. **A**: one\n2. **B**: two\n3. **C**: thr", "1. **A**: one\n2. **B**: two"),
        # a heading or label left at the end announces what was cut: dropped
        ("### Risks\n- a thing\n- another thing\n\n### Trade-offs:\n- x", "### Risks\n- a thing\n- another thing"),
        ("1. First point\n2. Second point\n3. **Third**:", "1. First point\n2. Second point"),
        # a bare list number is not a sentence end
        ("1. **A**: one.\n2.", "1. **A**: one."),
        # an unclosed code block goes, with everything after its fence
        ("Intro sentence.\n\n```python\ndef f():\n    return 1", "Intro sentence."),
    ],
)
def test_cut_text_ends_at_its_last_complete_part(text: str, expected: str) -> None:
    assert trim_to_complete(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Allow up to 20.",
        "Fail open (with an alert).",
        "1. **A**: one.\n2. **B**: two.",
        "Is it fast? Yes!",
        '"Quoted."',
    ],
)
def test_complete_text_is_kept(text: str) -> None:
    assert trim_to_complete(text) == text
    assert trim_to_complete(text + "  \n") == text


def test_text_with_no_complete_part_is_kept_as_it_is() -> None:
    assert trim_to_complete("no end at all here") == "no end at all here"
    assert trim_to_complete("") == ""
    assert trim_to_complete("### Heading only") == "### Heading only"
