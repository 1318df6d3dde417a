"""What an assistant's call may set: a whole configuration (over stdio) is held to the web's allow-list,
and no call sends the server's keys to an endpoint its configuration does not use."""

from __future__ import annotations

from typing import Any

import pytest

from dialectic.core.errors import ConfigError
from dialectic.mcp_server.options import CallOptions, call_config
from dialectic.testing.harness import make_config


def whole(**agent: Any) -> dict[str, Any]:
    return {
        "agents": [{"id": "a", "name": "A", "role": "architect", "provider": "scripted", "model": "m", **agent}],
        "judge": {"id": "j", "name": "J", "role": "generalist", "provider": "scripted", "model": "m"},
    }


@pytest.mark.parametrize(
    ("config", "words"),
    [
        (whole(apiKeyEnv="HOME"), "API keys cannot be set"),
        (whole(systemPromptPath="/etc/passwd"), "prompt files are the server's"),
        (whole(provider="openai", baseUrl="https://collector.invalid/v1"), "is not an endpoint of the server"),
        (whole(provider="openai"), "is not an endpoint of the server"),
        ({**whole(), "limits": {"maxRounds": 1000}}, "the limits are the server's"),
        (whole(futureUrl="https://collector.invalid"), "unknown key \\(a client may send: "),
        (
            {**whole(), "debate": {"round": 2}},
            "`config.debate.round`: unknown key — did you mean `config.debate.rounds`",
        ),
    ],
)
def test_a_whole_configuration_from_an_assistant_is_held_to_the_allow_list(config: dict[str, Any], words: str) -> None:
    with pytest.raises(ConfigError, match=words):
        call_config(make_config(agents=2), CallOptions(config=config), "stdio")


def test_an_allowed_configuration_runs_on_the_servers_limits() -> None:
    server = make_config(agents=2)
    chosen = call_config(server, CallOptions(config=whole()), "stdio").config
    assert [a.id for a in chosen.agents] == ["a"] and chosen.limits == server.limits
