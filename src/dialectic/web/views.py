"""What the API's read endpoints answer with, as pure functions of stored debates and the configuration."""

from __future__ import annotations

from datetime import datetime
from typing import Any, get_args

from dialectic.agents.participants import ROLE_TITLES
from dialectic.agents.templates import known_roles
from dialectic.core.config import ANSWER_BUDGET, FORMATS, HUMAN_PROVIDER, AgentConfig, TerminationCondition
from dialectic.core.domain import DebateState, DebateStatus
from dialectic.llm.registry import known_providers
from dialectic.loading.client_config import CLIENT_SETTINGS, SettingsSpec, endpoint_of
from dialectic.reporting.export import export_json
from dialectic.reporting.report import render_report
from dialectic.store.base import DebateListing, DebateStore, headline
from dialectic.store.leases import STALE, owner_process_gone, shown_status
from dialectic.web.endpoint_models import EndpointBook
from dialectic.web.new_debate import ServerConfig
from dialectic.web.presenter import token_totals
from dialectic.web.time_zone import server_time_zone

PROBLEM_CHARS = 140
"""The most of a problem's first line a line of the debates list shows."""
STATUSES: tuple[str, ...] = (*get_args(DebateStatus), STALE)
"""The statuses a listing shows and filters on: the stored ones, and ``stale`` (saved as running,
but no live process runs it)."""


def export_text(state: DebateState) -> str:
    """The debate as ``dialectic export`` writes it: the seed's JSON shape, its ledger and totals."""
    return export_json(state)


def report_text(state: DebateState) -> str:
    """The Markdown report, as ``dialectic report`` writes it."""
    return render_report(state)


def shown(store: DebateStore, listing: DebateListing, now: datetime) -> str:
    if listing.status != "running":
        return listing.status
    return shown_status(listing.status, store.read_lease(listing.id), now, owner_process_gone)


def listing_row(state: DebateState, status: str) -> dict[str, Any]:
    """One line of the debates list: status, problem, rounds, agents, format, created, tokens."""
    saved = state.saved_config()
    return {
        "id": state.id,
        "status": status,
        "problem": _headline(state.problem),
        "currentRound": state.current_round,
        "rounds": saved.debate.rounds if saved is not None else None,
        "format": saved.debate.format if saved is not None else "critique-refine",
        "agents": [agent.name for agent in state.agents],
        "createdAt": state.created_at.isoformat(),
        "updatedAt": state.updated_at.isoformat(),
        "tokens": token_totals(state).to_json(),
    }


def _headline(problem: str) -> str:
    return headline(problem, PROBLEM_CHARS)


def options(server: ServerConfig) -> dict[str, Any]:
    """What the new-debate form offers: the server's agents and judge, roles, providers, formats, defaults,
    limits, and the settings a whole configuration sent over the API may have (``configurable``).

    The providers are those with an endpoint a request may use (see
    :mod:`dialectic.loading.client_config`), and ``human`` (a seat a person plays on the page); the endpoints
    and key variables themselves are left out.
    """
    config = server.config
    debate = config.debate
    book = server.book()
    return {
        "agents": [_agent(a, book) for a in config.participants()],
        "judge": {**_agent(config.judge, book), "fallback": config.judge.fallback or "auto"},
        "roles": [{"role": role, "name": ROLE_TITLES.get(role, role.title())} for role in known_roles()],
        "providers": sorted(({e.provider for e in server.endpoints()} & set(known_providers())) | {HUMAN_PROVIDER}),
        "formats": list(FORMATS),
        "terminations": list(get_args(TerminationCondition.model_fields["type"].annotation)),
        "defaults": {
            "rounds": debate.rounds,
            "format": debate.format,
            "termination": debate.termination().to_json_dict(),
            "clarify": debate.interactive_clarifications,
            "maxAnswers": debate.answers.max_answers,
        },
        "answerBudget": {"min": ANSWER_BUDGET[0], "max": ANSWER_BUDGET[1]},
        "limits": config.limits.to_json_dict(),
        "statuses": list(STATUSES),
        "configurable": configurable(CLIENT_SETTINGS),
        "timeZone": server_time_zone(),
    }


def configurable(spec: SettingsSpec) -> dict[str, Any]:
    """The keys a client may set, as a tree: ``true`` for a setting, an object for a section."""
    return {
        key: True if rule is None else configurable(rule) for key, rule in spec.items() if not isinstance(rule, str)
    }


def _agent(agent: AgentConfig, book: EndpointBook) -> dict[str, Any]:
    return {
        "id": agent.id,
        "name": agent.name,
        "role": agent.role,
        "provider": agent.provider,
        "model": agent.model,
        "temperature": agent.temperature,
        "endpoint": None if agent.is_human else book.id_of(endpoint_of(agent)),
    }
