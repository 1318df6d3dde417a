"""A design round's refinement follows the agent's proposal as a conversation: it opens with the proposal's
prompt and the proposal, token for token, so a prompt cache serves that whole prefix; a critique stays one
message, free to start as soon as the proposal it is about exists."""

from __future__ import annotations

from collections.abc import Callable

from dialectic.llm.base import CompletionRequest, Message
from dialectic.testing.harness import Harness, make_config


def calls_of(h: Harness, kind: str, role: str) -> list[CompletionRequest]:
    return [c for c in h.provider.calls if c.tag == f"{kind}:{role}"]


def test_the_refinement_follows_the_agents_own_proposal(harness: Callable[..., Harness]) -> None:
    h = harness()
    state = h.start(make_config(agents=3, rounds=2, summarization={"enabled": False}))
    assert state.status == "completed"
    for agent in state.config["agents"]:
        role = agent["role"]
        proposals = calls_of(h, "proposal", role)
        assert len(proposals) == 1  # round 2's proposal is carried over from round 1's refinement
        (system, opening) = proposals[0].messages
        own = next(c for c in state.round(1).contributions if c.agent_id == agent["id"] and c.type == "proposal")
        prefix = (system, opening, Message("assistant", own.content.strip()))
        refinement = calls_of(h, "refinement", role)[0]
        assert refinement.messages[:3] == prefix and len(refinement.messages) == 4
        assert "The problem:" not in refinement.last_user  # only the new turn is new text
        assert "Critique 1 of your proposal" in refinement.last_user and "Critique 2" in refinement.last_user
        carried = next(c for c in state.round(2).contributions if c.agent_id == agent["id"] and c.type == "proposal")
        assert carried.metadata.carried_over  # round 2's proposal is round 1's refinement, and opens its refinement
        assert calls_of(h, "refinement", role)[1].messages[2] == Message("assistant", carried.content.strip())
        critiques = calls_of(h, "critique", role)
        assert critiques and all([m.role for m in c.messages] == ["system", "user"] for c in critiques)


def test_a_reasoning_round_keeps_one_message_prompts(harness: Callable[..., Harness]) -> None:
    h = harness()
    h.start(
        make_config(
            agents=2, rounds=1, problemKind="reasoning", format="critique-refine", summarization={"enabled": False}
        )
    )
    turns = [c for c in h.provider.calls if c.tag.startswith(("critique", "refinement"))]
    assert turns and all([m.role for m in c.messages] == ["system", "user"] for c in turns)
