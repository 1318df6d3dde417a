"""``toolCalls`` on contributions and solutions: a new optional field, so stores written before it still load."""

from __future__ import annotations

from dialectic.core.changes import ContributionRecorded
from dialectic.core.domain import Contribution, Solution, ToolCallRecord

OLD_RECORD = {
    "kind": "contribution_recorded",
    "roundNumber": 1,
    "contribution": {"agentId": "a", "agentRole": "architect", "type": "proposal", "content": "Use Redis."},
}


def test_a_change_saved_before_tool_calls_loads_without_them() -> None:
    change = ContributionRecorded.model_validate(OLD_RECORD)
    assert change.contribution.tool_calls is None
    assert "toolCalls" not in change.to_json_dict()["contribution"]  # and is written back as it was


def test_tool_calls_round_trip_in_camel_case() -> None:
    record = ToolCallRecord(name="file_read", arguments={"path": "a.md"}, result_chars=10, latency_ms=2, error=None)
    contribution = Contribution(agent_id="a", agent_role="architect", type="proposal", content="x", tool_calls=[record])
    data = contribution.to_json_dict()
    assert data["toolCalls"] == [
        {"name": "file_read", "arguments": {"path": "a.md"}, "resultChars": 10, "latencyMs": 2}
    ]
    assert Contribution.model_validate(data) == contribution
    assert (
        Contribution(agent_id="a", agent_role="r", type="proposal", content="x", tool_calls=[]).to_json_dict()[
            "toolCalls"
        ]
        == []
    )  # tools offered, none called: said, not left out
    assert Solution(description="d").tool_calls is None
