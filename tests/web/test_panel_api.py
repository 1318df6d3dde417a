"""The panel over the JSON API: the allowed endpoints and their models, and agents and a judge picked from them."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from dialectic.core.config import SystemConfig
from dialectic.llm.base import CompletionRequest
from dialectic.llm.scripted import Script, default_reply
from dialectic.loading.client_config import Endpoint
from dialectic.testing.fake_server import FakeLLMServer, closed_port_url
from dialectic.testing.harness import make_config
from dialectic.web.endpoint_models import endpoint_book
from tests.web.conftest import Api


def reply(request: CompletionRequest) -> Script:
    return default_reply(request)


@pytest.fixture
def fake() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(reply, models=("m-listed", "m-other")) as server:
        yield server


def two_endpoints(up: str, down: str) -> SystemConfig:
    """The first agent and the judge on ``up``, the second agent on ``down`` (nothing listens there)."""
    data = make_config(agents=2, rounds=1).model_dump(by_alias=True)
    for agent, url, model in ((data["agents"][0], up, "m-one"), (data["agents"][1], down, "m-two")):
        agent.update(provider="openai", baseUrl=url, model=model)
    data["judge"].update(provider="openai", baseUrl=up, model="m-one")
    return SystemConfig.model_validate(data)


def test_endpoints_are_named_by_provider_numbered_when_several() -> None:
    endpoints = frozenset({Endpoint("openai", "http://b/v1"), Endpoint("openai", "http://a/v1"), Endpoint("scripted")})
    book = endpoint_book(endpoints, [])
    assert book.ids == {
        "openai-1": Endpoint("openai", "http://a/v1"),
        "openai-2": Endpoint("openai", "http://b/v1"),
        "scripted": Endpoint("scripted"),
    }


def test_the_models_of_each_allowed_endpoint_are_listed(
    serve: Callable[..., None], fake: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    down = closed_port_url() + "/v1"

    async def scenario(api: Api) -> None:
        response = await api.client.get("/api/models")
        assert response.status_code == 200, response.text
        listed = {e["id"]: e for e in response.json()["endpoints"]}
        [up_id] = [key for key, e in listed.items() if "error" not in e]
        [down_id] = [key for key, e in listed.items() if "error" in e]
        # the endpoint's own list (its scripted model first), then what the configuration names there
        assert listed[up_id]["models"] == [fake.scripted.model, "m-listed", "m-other", "m-one"]
        assert listed[down_id]["models"] == ["m-two"] and "cannot connect" in listed[down_id]["error"]
        assert down not in response.text and fake.url not in response.text  # addresses are not shown
        options = (await api.client.get("/api/options")).json()
        assert [a["endpoint"] for a in options["agents"]] == [up_id, down_id]
        assert options["judge"]["endpoint"] == up_id and options["judge"]["fallback"] == "auto"

        body = {
            "problem": "Design a rate limiter",
            "agents": [
                {"id": "agent-architect", "role": "architect", "endpoint": up_id, "model": "m-listed"},
                {"id": "agent-performance", "role": "performance", "endpoint": up_id, "model": "m-other"},
            ],
            "judge": {"endpoint": up_id, "model": "m-listed", "temperature": 0.1, "fallback": "agent-performance"},
        }
        before = len(fake.requests)
        debate_id = await api.start(**{k: v for k, v in body.items() if k != "problem"})
        assert await api.finished(debate_id) == "completed"
        models = {r.body["model"] for r in fake.requests[before:] if r.path.endswith("/chat/completions")}
        assert models == {"m-listed", "m-other"}
        saved = api.ctx.store.load(debate_id).saved_config()
        assert saved is not None and saved.judge.fallback == "agent-performance" and saved.judge.temperature == 0.1

        for change, field, message in (
            (
                {"agents": [{"role": "architect", "endpoint": "elsewhere", "model": "m"}]},
                "agents",
                f"agents[0].endpoint: no endpoint 'elsewhere' on this server (endpoints: {', '.join(listed)})",
            ),
            ({"judge": {"endpoint": "elsewhere"}}, "judge", "judge.endpoint: no endpoint 'elsewhere'"),
            ({"judge": {"fallback": "agent-nobody"}}, "judge", "judge.fallback: no agent 'agent-nobody'"),
        ):
            refused = await api.client.post("/api/debates", json={"problem": "x", **change})
            assert refused.status_code == 422, refused.text
            assert refused.json()["fields"][field].startswith(message), refused.json()

    serve(scenario, config=two_endpoints(fake.openai_base_url, down))
