"""A new debate's request: each field checked with the CLI's rules and messages; what a request may not do."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dialectic.cli.inputs import resolve_problem
from dialectic.core.config import LimitsConfig
from dialectic.core.errors import DialecticError
from dialectic.testing.harness import make_config
from dialectic.web.new_debate import problem_text
from tests.web.conftest import Api


def cli_message(problem: str, limits: LimitsConfig) -> str:
    with pytest.raises(DialecticError) as raised:
        resolve_problem(problem, None, limits)
    return raised.value.message


@pytest.mark.parametrize("problem", ["", "   \n ", "x" * 31])
def test_the_problems_messages_are_the_clis(problem: str) -> None:
    limits = LimitsConfig(max_problem_chars=30)
    with pytest.raises(DialecticError) as raised:
        problem_text(problem, limits)
    assert raised.value.message == cli_message(problem, limits)


def post(serve: Callable[..., None], body: dict[str, Any], **options: Any) -> tuple[int, dict[str, Any], int]:
    """POST ``body``; the status, the JSON answer and how many debates exist afterwards."""
    seen: list[tuple[int, dict[str, Any], int]] = []

    async def scenario(api: Api) -> None:
        response = await api.client.post("/api/debates", json=body)
        seen.append((response.status_code, response.json(), len(api.ctx.store.list())))

    serve(scenario, **options)
    return seen[0]


def test_every_wrong_field_is_named_with_its_message_and_nothing_is_created(serve: Callable[..., None]) -> None:
    wrong = {"problem": " ", "rounds": 0, "format": "shouting", "roles": ["poet"], "maxAnswers": 65}
    status, body, debates = post(serve, wrong)
    assert status == 422 and debates == 0
    assert body["error"] == "invalid_request"
    assert body["fields"] == {
        "problem": "the problem is empty",
        "rounds": "rounds must be at least 1 (got 0)",
        "maxAnswers": "maxAnswers must be between 2 and 64 (got 65)",
        "format": "format shouting: unknown format (known: auto, adaptive, critique-refine, free-form, "
        "round-limited, structured, convergence-seeking, simultaneous, vote, council, correction)",
        "roles": "roles poet: no enabled agent has that role (roles available: architect, performance)",
    }
    assert body["detail"] == "the problem is empty"


def test_the_servers_limits_hold(serve: Callable[..., None]) -> None:
    config = make_config(agents=2, rounds=1).model_copy(
        update={"limits": LimitsConfig(max_problem_chars=50, max_rounds=3)}
    )
    status, body, _ = post(serve, {"problem": "x" * 51, "rounds": 4}, config=config)
    assert status == 422
    assert body["fields"]["problem"].startswith("the problem has 51 characters, more than the limit of 50")
    assert body["fields"]["rounds"].startswith("rounds 4 is more than the limit of 3 rounds")


@pytest.mark.parametrize(
    ("body", "field", "words"),
    [
        ({"agents": [{"role": "architect", "temperature": 3}]}, "agents", "less than or equal to 2"),
        ({"agents": [{"role": "architect", "id": "agent-nope"}]}, "agents", "no agent 'agent-nope'"),
        ({"agents": [{"role": "architect", "provider": "carrier-pigeon"}]}, "agents", "unknown provider"),
        ({"agents": []}, "agents", "choose at least one agent"),
        ({"termination": {"type": "quality", "threshold": 150}}, "termination", "less than or equal to 100"),
        ({"termination": {"type": "whenever"}}, "termination", "Input should be"),
        ({"rounds": "many"}, "rounds", "valid integer"),
        ({"surprise": 1}, "surprise", "`surprise`: unknown key"),
        ({"rouds": 1}, "rouds", "`rouds`: unknown key — did you mean `rounds`?"),
        (
            {"agents": [{"role": "architect", "temprature": 1}]},
            "agents",
            "`agents[0].temprature`: unknown key — did you mean `agents[0].temperature`?",
        ),
        (
            {"agents": [{"role": "architect", "provider": "openai"}]},
            "agents",
            "openai is not an endpoint of the server",
        ),
    ],
)
def test_a_wrong_field_is_named(
    serve: Callable[..., None], monkeypatch: pytest.MonkeyPatch, body: dict[str, Any], field: str, words: str
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    status, answer, debates = post(serve, {"problem": "Design a cache", **body})
    assert status == 422 and debates == 0
    named = [message for name, message in answer["fields"].items() if name.split(".")[0].split("[")[0] == field]
    assert named and words in named[0], answer


def test_agents_are_chosen_and_edited(serve: Callable[..., None]) -> None:
    async def scenario(api: Api) -> None:
        body = {
            "problem": "Design a cache",
            "agents": [
                {"id": "agent-performance", "role": "performance", "model": "fast-model", "temperature": 0.1},
                {"role": "security"},
                {"role": "security", "name": "Second Security"},
            ],
            "format": "free-form",
            "rounds": 1,
            "termination": {"type": "fixed"},
        }
        debate_id = await api.start(**{k: v for k, v in body.items() if k != "problem"})
        await api.finished(debate_id)
        state = api.ctx.store.load(debate_id)
        assert [(a.id, a.role, a.model, a.temperature) for a in state.agents] == [
            ("agent-performance", "performance", "fast-model", 0.1),
            ("agent-security", "security", "m", 0.5),
            ("agent-security-2", "security", "m", 0.5),
        ]
        assert state.agents[1].name == "Security Specialist" and state.agents[2].name == "Second Security"
        assert state.config["debate"]["format"] == "free-form"
        assert state.config["debate"]["terminationCondition"] == {"type": "fixed", "threshold": 80}

    serve(scenario)


def test_a_whole_configuration_may_be_sent(serve: Callable[..., None]) -> None:
    async def scenario(api: Api) -> None:
        config = make_config(agents=3, rounds=1).to_json_dict()
        del config["limits"], config["allowOutsidePrompts"], config["pricing"], config["hooks"]
        debate_id = await api.start(config=config)
        await api.finished(debate_id)
        assert len(api.ctx.store.load(debate_id).agents) == 3

    serve(scenario)


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (lambda c: c["agents"][0].update(systemPromptPath="/etc/passwd"), "may not name prompt files"),
        (lambda c: c["judge"].update(summaryPromptPath="prompt.md"), "may not name prompt files"),
        (lambda c: c["agents"][0].update(apiKeyEnv="HOME"), "API keys cannot be set"),
        (lambda c: c["agents"][0].update(apiKey="sk-stolen"), "API keys cannot be set"),
        (lambda c: c["agents"][0].update(baseUrl="https://collector.invalid/v1"), "is not an endpoint of the server"),
        (lambda c: c.update(limits={"maxRounds": 1000}), "the limits are the server's"),
        (lambda c: c.update(pricing={"openai": {"gpt-4o": {"input": 0, "output": 0}}}), "the prices are the server's"),
        (lambda c: c.update(allowOutsidePrompts=True), "not accepted over the API"),
        (lambda c: c["agents"][0].update(temperature=9), "invalid configuration: agents[0].temperature"),
        (lambda c: c["agents"][0].update(provider="carrier-pigeon"), "unknown provider 'carrier-pigeon'"),
    ],
)
def test_a_configuration_sent_over_the_api_is_held_to_what_a_request_may_do(
    serve: Callable[..., None], change: Callable[[dict[str, Any]], None], words: str
) -> None:
    config: dict[str, Any] = {
        "agents": [{"id": "a", "name": "A", "role": "architect", "provider": "scripted", "model": "m"}],
        "judge": {"id": "j", "name": "J", "role": "generalist", "provider": "scripted", "model": "m"},
    }
    change(config)
    status, body, debates = post(serve, {"problem": "Design a cache", "config": config})
    assert status == 422 and debates == 0
    assert words in body["fields"]["config"], body


def test_an_endpoint_of_the_servers_own_configuration_may_be_named(serve: Callable[..., None], tmp_path: Path) -> None:
    server_config = make_config(agents=1).model_copy()
    server_config.agents[0].base_url = "http://127.0.0.1:9/v1"
    config = {
        "agents": [
            {"id": "a", "name": "A", "role": "architect", "provider": "scripted", "baseUrl": "http://127.0.0.1:9/v1"}
        ],
        "judge": {"id": "j", "name": "J", "role": "generalist", "provider": "scripted", "model": "m"},
    }
    status, body, _ = post(serve, {"problem": "Design a cache", "config": config, "rounds": 1}, config=server_config)
    assert status == 201, body


def test_a_body_that_is_not_json_is_a_bad_request(serve: Callable[..., None]) -> None:
    async def scenario(api: Api) -> None:
        response = await api.client.post(
            "/api/debates", content=b"{not json", headers={"content-type": "application/json"}
        )
        assert response.status_code == 400
        assert response.json() == {"error": "bad_request", "detail": "the request body is not valid JSON"}

    serve(scenario)


def test_max_answers_sets_the_adaptive_budget_saved_with_the_debate(serve: Callable[..., None]) -> None:
    saved: list[Any] = []

    async def scenario(api: Api) -> None:
        body = {"problem": "What is 17 * 3?", "format": "adaptive", "maxAnswers": 9}
        response = await api.client.post("/api/debates", json=body)
        assert response.status_code == 201, response.text
        saved.append(api.ctx.store.load(response.json()["id"]).config)

    serve(scenario)
    assert saved[0]["debate"]["answers"]["maxAnswers"] == 9
