"""The scripted model writes a small debate that reads like one: proposals, critiques naming a point, a solution."""

from __future__ import annotations

import re

from dialectic.llm.scripted import ScriptedProvider
from dialectic.store import MemoryStore
from dialectic.testing.harness import Harness, make_config

BOLD = re.compile(r"\*\*([^*]+)\*\*")


def test_a_scripted_debate_reads_like_a_debate() -> None:
    state = Harness(MemoryStore(), ScriptedProvider()).start(make_config(agents=3, rounds=2))
    first = state.round(1)
    for proposal in first.of_type("proposal"):
        points = proposal.content.splitlines()
        assert len(points) == 3 and all(re.match(r"\d\. \*\*[^*]+\*\*: \w", p) for p in points), proposal.content
    for critique in first.of_type("critique"):
        target = first.find("proposal", critique.target_agent_id or "")
        assert target is not None
        named = BOLD.findall(critique.content)
        assert named and set(named) <= set(BOLD.findall(target.content))  # it names points of what it read
        assert "add " in critique.content  # and the fix
    refinement = first.find("refinement", first.of_type("proposal")[0].agent_id)
    assert refinement is not None and "(from the critiques)" in refinement.content
    solution = state.final_solution
    assert solution is not None and solution.structured
    assert len(BOLD.findall(solution.description)) >= 3
    fields = [solution.description, *solution.tradeoffs, *solution.recommendations, *solution.open_questions]
    assert not any("Scripted" in text for text in fields)
    assert solution.unfulfilled_major_requirements == []
