"""What a web client may configure, where the server's keys may go, and sizes checked before any work."""

from __future__ import annotations

import typing
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from dialectic.core.config import AgentConfig, SystemConfig
from dialectic.core.errors import InvalidArgumentsError
from dialectic.loading.client_config import CLIENT_SETTINGS, Endpoint, SettingsSpec, parse_endpoint
from dialectic.testing.harness import make_config
from dialectic.web import new_debate
from dialectic.web.new_debate import MAX_LIST_ITEMS, ServerConfig
from tests.web.conftest import Api
from tests.web.test_new_debate_validation import post

SERVER_URL = "http://127.0.0.1:9/v1"


def config_fields(model: type[BaseModel], prefix: str = "") -> Iterator[tuple[str, type[BaseModel] | None]]:
    """Every field of ``model`` and of the models in it, by its path of aliases."""
    for name, field in model.model_fields.items():
        path = f"{prefix}{field.alias or name}"
        annotation = field.annotation
        candidates = [annotation, *typing.get_args(annotation)]
        nested = next((c for c in candidates if isinstance(c, type) and issubclass(c, BaseModel)), None)
        yield path, nested
        if nested is not None:
            yield from config_fields(nested, f"{path}.")


def spec_at(path: str) -> SettingsSpec | str | None:
    rule: SettingsSpec | str | None = CLIENT_SETTINGS
    for key in path.split("."):
        if isinstance(rule, str):
            return rule  # a section that is the server's: everything in it is
        assert isinstance(rule, dict), f"{path}: {key} is under a setting, not a section"
        assert key in rule, f"config field {path} is not classified in client_config.CLIENT_SETTINGS"
        rule = rule[key]
    return rule


def test_every_configuration_field_is_classified_for_the_api() -> None:
    """A field added to the configuration is refused over the API until it is put in the allow-list."""
    for path, nested in config_fields(SystemConfig):
        rule = spec_at(path)
        if nested is not None and not isinstance(rule, str) and path != "pricing":
            assert isinstance(rule, dict), f"{path} is a section: its keys must be listed"


def openai_server(url: str | None = SERVER_URL) -> SystemConfig:
    """A server whose agents and judge speak the OpenAI API at ``url`` (its default address for ``None``)."""
    config = make_config(agents=2, rounds=1)
    for agent in [*config.agents, config.judge]:
        agent.provider, agent.base_url, agent.model = "openai", url, "gpt-x"
    return config


def whole_config(**agent: Any) -> dict[str, Any]:
    return {
        "agents": [{"id": "a", "name": "A", "role": "architect", "model": "m", **agent}],
        "judge": {
            "id": "j",
            "name": "J",
            "role": "generalist",
            "provider": "openai",
            "model": "m",
            "baseUrl": SERVER_URL,
        },
    }


@pytest.fixture(autouse=True)
def _server_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """The server holds a key: the case where a request must not be able to send it elsewhere."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-server-own-key")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


@pytest.mark.parametrize(
    "body",
    [
        {"config": whole_config(provider="openai")},  # no baseUrl: OpenAI's own address
        {"config": whole_config(provider="openai", baseUrl="https://collector.invalid/v1")},
        {"config": whole_config(provider="anthropic")},
        {"agents": [{"role": "architect", "provider": "anthropic"}]},
    ],
)
def test_a_request_cannot_point_the_servers_key_at_an_endpoint_of_its_choosing(
    serve: Callable[..., None], body: dict[str, Any]
) -> None:
    status, answer, debates = post(serve, {"problem": "Design a cache", **body}, config=openai_server())
    assert status == 422 and debates == 0, answer
    assert "is not an endpoint of the server's configuration" in answer["detail"]
    assert f"openai at {SERVER_URL}" in answer["detail"] and "--allow-endpoint" in answer["detail"]


def test_the_servers_own_endpoint_is_used_by_an_agent_moved_to_its_provider(serve: Callable[..., None]) -> None:
    server = openai_server()
    server.agents[1].provider, server.agents[1].base_url = "scripted", None

    async def scenario(api: Api) -> None:
        response = await api.client.post(
            "/api/debates",
            json={
                "problem": "Design a cache",
                "agents": [{"role": "kiss", "id": "agent-performance", "provider": "openai"}],
            },
        )
        # the endpoint check passes: the agent went to the server's URL (nothing listens there: the run fails later)
        assert response.status_code == 201, response.text
        state = api.ctx.store.load(response.json()["id"])
        assert state.config["agents"][0]["baseUrl"] == SERVER_URL
        await api.ctx.runs.shutdown()

    serve(scenario, config=server)


def test_allow_endpoint_widens_what_a_request_may_use(serve: Callable[..., None], tmp_path: Path) -> None:
    async def scenario(api: Api) -> None:
        object.__setattr__(
            api.ctx, "server", ServerConfig(openai_server(), tmp_path, frozenset({Endpoint("anthropic")}))
        )
        options = (await api.client.get("/api/options")).json()
        assert options["providers"] == ["anthropic", "human", "openai"]
        response = await api.client.post(
            "/api/debates",
            json={"problem": "Design a cache", "agents": [{"role": "architect", "provider": "anthropic"}]},
        )
        assert response.status_code == 422
        assert "ANTHROPIC_API_KEY" in response.json()["detail"]  # past the endpoint check, to the key's

    serve(scenario, config=openai_server())


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (
            lambda c: c["agents"][0].update(futureUrl="https://collector.invalid"),
            "`config.agents[0].futureUrl`: unknown key (a client may send: ",
        ),
        (lambda c: c["judge"].update(promptDir="/etc"), "`config.judge.promptDir`: unknown key (a client may send"),
        (lambda c: c.update(agnets=[]), "`config.agnets`: unknown key — did you mean `config.agents`?"),
        (lambda c: c.update(debate={"context": {"dir": "/etc"}}), "a context directory is the server's"),
        (lambda c: c.update(debate={"retry": {"proxyUrl": "http://x"}}), "config.debate.retry.proxyUrl"),
        (lambda c: c.update(plugins=["evil"]), "`config.plugins`: unknown key"),
        (lambda c: c["agents"][0].update(api_key_env="HOME"), "API keys cannot be set"),
        (lambda c: c["agents"][0].update(system_prompt_path="/etc/passwd"), "prompt files are the server's"),
    ],
)
def test_keys_a_client_may_not_send_are_refused_not_ignored(
    serve: Callable[..., None], change: Callable[[dict[str, Any]], None], words: str
) -> None:
    config = whole_config(provider="openai", baseUrl=SERVER_URL)
    change(config)
    status, answer, debates = post(serve, {"problem": "Design a cache", "config": config}, config=openai_server())
    assert status == 422 and debates == 0
    assert words in answer["fields"]["config"], answer


def test_options_list_what_a_client_may_configure(serve: Callable[..., None]) -> None:
    async def scenario(api: Api) -> None:
        options = (await api.client.get("/api/options")).json()
        assert options["providers"] == ["human", "openai"]  # human: a seat a person plays on the page
        configurable = options["configurable"]
        assert set(configurable) == {"agents", "judge", "debate"}
        assert "apiKeyEnv" not in configurable["agents"] and "systemPromptPath" not in configurable["agents"]
        assert configurable["debate"]["context"] == {
            "mode": True,
            "maxToolCalls": True,
            "judgeTools": True,
            "maxReadChars": True,
        }

    serve(scenario, config=openai_server())


def counting_edits(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    built: list[int] = []
    edited = new_debate._edited

    def counted(index: int, *args: Any) -> AgentConfig:
        built.append(index)
        return edited(index, *args)

    monkeypatch.setattr(new_debate, "_edited", counted)
    return built


@pytest.mark.parametrize("count", [13, MAX_LIST_ITEMS + 1, 20_000])
def test_too_many_agents_are_refused_before_one_is_built(
    serve: Callable[..., None], monkeypatch: pytest.MonkeyPatch, count: int
) -> None:
    built = counting_edits(monkeypatch)
    status, answer, debates = post(serve, {"problem": "x", "agents": [{"role": "critic"}] * count})
    assert status == 422 and debates == 0
    assert built == []
    words = "at most 256 items" if count > MAX_LIST_ITEMS else "13 agents, more than the server's limit of 12"
    assert words in answer["detail"], answer


def test_too_many_agents_in_a_whole_configuration_are_refused_before_validation(serve: Callable[..., None]) -> None:
    config = whole_config(provider="openai", baseUrl=SERVER_URL)
    config["agents"] = config["agents"] * 5_000
    status, answer, debates = post(serve, {"problem": "x", "config": config}, config=openai_server())
    assert status == 422 and debates == 0
    assert answer["fields"]["config"] == "config.agents: 5,000 agents, more than the server's limit of 12"


def test_repeated_roles_get_distinct_ids_in_one_pass() -> None:
    config = make_config(agents=1)
    choices = [new_debate.AgentChoice(role="critic")] * 200
    agents = new_debate.with_agents(config, choices, frozenset({Endpoint("scripted")})).agents
    assert [a.id for a in agents] == ["agent-critic", *(f"agent-critic-{n}" for n in range(2, 201))]


def test_an_id_taken_by_a_numbered_repeat_is_skipped() -> None:
    taken: dict[str, int] = {}
    ids = [new_debate._unique(i, taken) for i in ("a", "a-2", "a", "a")]
    assert ids == ["a", "a-2", "a-3", "a-4"]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("anthropic", Endpoint("anthropic")),
        ("llamacpp", Endpoint("llamacpp", "http://127.0.0.1:8080/v1")),
        ("openai=http://10.0.0.5:8000/v1/", Endpoint("openai", "http://10.0.0.5:8000/v1")),
    ],
)
def test_allow_endpoint_values(value: str, expected: Endpoint) -> None:
    assert parse_endpoint(value) == expected


@pytest.mark.parametrize(
    ("value", "words"), [("pigeon", "unknown provider"), ("openai=ftp://x", "http:// or https://")]
)
def test_bad_allow_endpoint_values_are_refused(value: str, words: str) -> None:
    with pytest.raises(InvalidArgumentsError, match=words):
        parse_endpoint(value)
