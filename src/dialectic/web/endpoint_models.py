"""The panel a person may pick on the page: the server's allowed endpoints, and the models each offers.

Each endpoint a debate started over the API may call (the allow-list, see
:mod:`dialectic.loading.client_config`) gets a short id (its provider's name, numbered when a
provider has several), so the page names an endpoint without its address. ``GET /api/models``
asks each endpoint for its models (``GET /v1/models``, as ``dialectic models`` does) and adds the
models the server's configurations name there, so an endpoint that cannot list its models still
offers those. An agent (or the judge) chosen with ``endpoint`` and ``model`` calls that endpoint
with the server's key for it; nothing outside the allow-list can be named.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from dialectic.core.config import AgentConfig
from dialectic.core.errors import DialecticError, InvalidArgumentsError
from dialectic.llm.registry import ProviderPool
from dialectic.loading.client_config import Endpoint, endpoint_of

LISTING_TIMEOUT_S = 10.0
"""The longest one endpoint's model listing is waited for."""


@dataclass(frozen=True)
class EndpointBook:
    """The allowed endpoints by id, with what the server's configurations use at each (key variable, models)."""

    ids: dict[str, Endpoint]
    key_envs: dict[Endpoint, str]
    configured: dict[Endpoint, list[str]]

    def id_of(self, endpoint: Endpoint) -> str | None:
        return next((key for key, known in self.ids.items() if known == endpoint), None)

    def endpoint(self, endpoint_id: str, where: str) -> Endpoint:
        found = self.ids.get(endpoint_id)
        if found is None:
            raise InvalidArgumentsError(
                f"{where}.endpoint: no endpoint '{endpoint_id}' on this server (endpoints: {', '.join(self.ids)})"
            )
        return found

    def settings(self, endpoint: Endpoint) -> dict[str, Any]:
        """The fields of an agent that calls ``endpoint``: provider, base URL and the server's key variable."""
        return {
            "provider": endpoint.provider,
            "base_url": endpoint.url or None,
            "api_key_env": self.key_envs.get(endpoint),
        }

    def caller(self, endpoint: Endpoint) -> AgentConfig:
        """A participant that calls ``endpoint`` (to ask it for its models)."""
        return AgentConfig(id="models", name="models", role="generalist", **self.settings(endpoint))


def endpoint_book(endpoints: frozenset[Endpoint], agents: Iterable[AgentConfig]) -> EndpointBook:
    """Ids for ``endpoints`` (sorted: ``openai``, or ``openai-1``, ``openai-2`` when a provider has several),
    and what ``agents`` (the server's configured participants) use at each."""
    ordered = sorted(endpoints)
    ids: dict[str, Endpoint] = {}
    for endpoint in ordered:
        same = [e for e in ordered if e.provider == endpoint.provider]
        key = endpoint.provider if len(same) == 1 else f"{endpoint.provider}-{same.index(endpoint) + 1}"
        ids[key] = endpoint
    key_envs: dict[Endpoint, str] = {}
    configured: dict[Endpoint, list[str]] = {}
    for agent in agents:
        if agent.is_human:
            continue
        at = endpoint_of(agent)
        if agent.api_key_env and at not in key_envs:
            key_envs[at] = agent.api_key_env
        models = configured.setdefault(at, [])
        if agent.model not in models:
            models.append(agent.model)
    return EndpointBook(ids, key_envs, configured)


async def list_models(book: EndpointBook, pool: ProviderPool) -> list[dict[str, Any]]:
    """Every allowed endpoint with the models it offers (listed, then configured), asked at once."""
    listings = await asyncio.gather(*(_listed(pool, book, endpoint) for endpoint in book.ids.values()))
    out: list[dict[str, Any]] = []
    for (key, endpoint), (listed, error) in zip(book.ids.items(), listings, strict=True):
        names = [*listed, *(m for m in book.configured.get(endpoint, []) if m not in listed)]
        entry: dict[str, Any] = {"id": key, "provider": endpoint.provider, "models": names}
        if error is not None:
            entry["error"] = error
        out.append(entry)
    return out


async def _listed(pool: ProviderPool, book: EndpointBook, endpoint: Endpoint) -> tuple[list[str], str | None]:
    """The models ``endpoint`` lists, or why it could not (a provider that cannot list offers none)."""
    try:
        client = pool.get(book.caller(endpoint))
    except DialecticError as exc:
        return [], exc.message
    ask = getattr(client, "models", None)
    if ask is None:
        return [], None
    try:
        listed = await asyncio.wait_for(ask(), LISTING_TIMEOUT_S)
    except DialecticError as exc:
        return [], exc.message
    except TimeoutError:
        return [], f"the endpoint did not list its models within {LISTING_TIMEOUT_S:.0f} s"
    return [str(model.id) for model in listed], None
