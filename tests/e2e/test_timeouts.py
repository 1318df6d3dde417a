"""Timeouts through the installed command: a silent endpoint is a provider failure (exit 3), soon."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from dialectic.core.errors import EXIT_PROVIDER_ERROR
from dialectic.testing.fake_server import FakeLLMServer

if TYPE_CHECKING:
    from tests.e2e.conftest import Workspace

pytestmark = pytest.mark.e2e


def test_a_silent_endpoint_fails_after_two_timeouts_per_call_with_exit_3(workspace: Workspace) -> None:
    with FakeLLMServer(fault_rate=1.0, fault_kinds=["stall"], stall_s=60.0) as silent:
        endpoint = {"provider": "openai", "baseUrl": silent.openai_base_url, "timeout": 500}
        config = {
            "agents": [
                {"id": "agent-architect", "name": "System Architect", "role": "architect", **endpoint},
                {"id": "agent-kiss", "name": "Simplicity Advocate", "role": "kiss", **endpoint},
            ],
            "judge": {"id": "judge-main", "name": "Technical Judge", "role": "generalist", **endpoint},
            "debate": {"rounds": 1},
        }
        path = workspace.root / "debate-config.json"
        path.write_text(json.dumps(config), encoding="utf-8")
        result = workspace.run("debate", "Design a rate limiter", "-c", str(path))
        stalls, completions = silent.faults_served["stall"], silent.call_count
    assert result.returncode == EXIT_PROVIDER_ERROR, result.stderr
    assert "Traceback" not in result.stderr
    assert len([line for line in result.stderr.splitlines() if line.startswith("error: ")]) == 1
    assert "sent nothing for 0.5 s" in result.stderr and "gave up after 2 attempts" in result.stderr
    assert completions == 0 and 2 <= stalls <= 2 * len(config["agents"])  # each call: at most two attempts
