"""``dialectic serve`` fires the post-debate hooks of the configuration it runs with, once per finished debate,
with links to the debate on the server; a client may not set hooks, and one sending a whole configuration
still gets the server's."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from dialectic.core.config import HookSettings, SystemConfig, WebhookTarget
from dialectic.testing.harness import make_config
from tests.hook_receiver import SECRET, HookReceiver
from tests.web.conftest import BASE_URL, Api


def hooked_config(url: str) -> SystemConfig:
    config = make_config(agents=2, rounds=1)
    return config.model_copy(update={"hooks": HookSettings(on_complete=[WebhookTarget(url=url)], backoff_ms=1)})


def test_a_debate_the_server_runs_is_posted_once_it_finishes(
    serve: Callable[..., None], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DIALECTIC_HOOK_SECRET", SECRET)
    with HookReceiver().running() as receiver:
        ids: list[str] = []

        async def scenario(api: Api) -> None:
            api.ctx.runs.base_url = BASE_URL
            debate_id = await api.start()
            assert await api.finished(debate_id) == "completed"
            ids.append(debate_id)

        serve(scenario, config=hooked_config(receiver.url))
        posts = receiver.wait_for(1)
    assert len(posts) == 1 and posts[0].signed_with(SECRET)
    payload = posts[0].json()
    assert payload["debateId"] == ids[0] and payload["status"] == "completed"
    assert payload["links"] == {
        "web": f"{BASE_URL}/#/debates/{ids[0]}",
        "export": f"{BASE_URL}/api/debates/{ids[0]}/export",
        "report": f"{BASE_URL}/api/debates/{ids[0]}/report",
    }


def test_a_whole_configuration_sent_by_a_client_keeps_the_servers_hooks(
    serve: Callable[..., None], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DIALECTIC_HOOK_SECRET", SECRET)
    with HookReceiver().running() as receiver:

        async def scenario(api: Api) -> None:
            sent = make_config(agents=2, rounds=1).model_dump(by_alias=True, exclude_none=True)
            del sent["limits"], sent["pricing"], sent["hooks"], sent["allowOutsidePrompts"]
            refused = await api.client.post(
                "/api/debates",
                json={
                    "problem": "Design a cache",
                    "config": {**sent, "hooks": {"onComplete": ["http://127.0.0.1:1/"]}},
                },
            )
            assert refused.status_code == 422 and "hooks" in refused.text
            debate_id = await api.start(config=sent)
            assert await api.finished(debate_id) == "completed"

        serve(scenario, config=hooked_config(receiver.url))
        posts = receiver.wait_for(1)
    assert len(posts) == 1
