"""What an adapter remembers of an endpoint: trusted for a while, dropped when the endpoint is gone."""

from __future__ import annotations

import pytest

from dialectic.llm.endpoint_memory import EndpointMemory


def test_an_entry_is_trusted_until_its_time_is_up() -> None:
    now = [100.0]
    memory: EndpointMemory[str, int] = EndpointMemory(ttl_s=10, clock=lambda: now[0])
    memory["http://a/v1/"] = 1
    now[0] = 109.9
    assert "http://a/v1/" in memory and memory["http://a/v1/"] == 1 and memory.get("http://a/v1/", 0) == 1
    now[0] = 110.0
    assert "http://a/v1/" not in memory and memory.get("http://a/v1/", 0) == 0 and memory.values() == []
    with pytest.raises(KeyError):
        memory["http://a/v1/"]


def test_setting_an_entry_again_starts_its_time_again() -> None:
    now = [0.0]
    memory: EndpointMemory[str, str] = EndpointMemory(ttl_s=10, clock=lambda: now[0])
    memory["e"] = "json_schema"
    now[0] = 8.0
    memory["e"] = "json_object"
    now[0] = 15.0
    assert memory["e"] == "json_object"


def test_forgetting_an_endpoint_drops_its_entries_whatever_the_key_shape() -> None:
    windows: EndpointMemory[tuple[str, str], int | None] = EndpointMemory()
    windows[("http://a/v1/", "m")] = 2048
    windows[("http://a/v1/", "n")] = None
    windows[("http://b/v1/", "m")] = 4096
    windows.forget("http://a/v1/")
    assert windows.values() == [4096]
    apis: EndpointMemory[str, bool] = EndpointMemory()
    apis["http://a/v1/"] = False
    apis["http://b/v1/"] = False
    apis.forget("http://a/v1/")
    assert "http://a/v1/" not in apis and "http://b/v1/" in apis
    apis.clear()
    assert apis.values() == []
