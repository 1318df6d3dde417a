"""Building the participants of a debate from its configuration.

Used both when a debate starts and when it resumes: the resolved configuration is
saved with the debate, so a resumed debate is rebuilt from exactly what it started with.
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from dialectic.agents.participants import (
    DebateAgent,
    Judge,
    PromptFile,
    Speaker,
    read_prompt_file,
    system_prompt_for,
)
from dialectic.core.config import AgentConfig, DebateSettings, RetrySettings, SummarizationConfig, SystemConfig
from dialectic.core.domain import AgentPromptSources, PromptSources
from dialectic.engine.budget import with_reply_limits
from dialectic.llm.call_cache import ReplyCache
from dialectic.llm.client import LLMClient
from dialectic.llm.registry import ProviderPool
from dialectic.llm.retry import RetryPolicy
from dialectic.store.base import CallCache, DebateStore


@dataclass
class Roster:
    agents: list[DebateAgent]
    judge: Judge
    settings: DebateSettings
    prompt_sources: PromptSources
    warnings: list[str]
    endpoints: dict[str, str] = field(default_factory=dict)
    """Participant id → the provider endpoint it calls (the name a learned context window is kept under)."""
    fallbacks: dict[str, Speaker] = field(default_factory=dict)
    """Human seat id → the participant its fallback model plays when the seat's deadline passes."""

    def agent(self, agent_id: str) -> DebateAgent:
        for agent in self.agents:
            if agent.id == agent_id:
                return agent
        raise KeyError(agent_id)


class ClientFactory:
    """Hands out clients that share one concurrency limit per provider endpoint, and the debate's call cache.

    The limit is the debate's own (``debate.maxConcurrency``), unless the provider pool shares one with other
    processes (:meth:`~dialectic.llm.registry.ProviderPool.shared_limit`: a Ray batch's limiter actors)."""

    def __init__(
        self, pool: ProviderPool, settings: DebateSettings, retry: RetryPolicy, cache: ReplyCache | None = None
    ) -> None:
        self._pool = pool
        self._max = settings.max_concurrency
        self._continuations = settings.max_continuations
        self._retry = retry
        self._cache = cache
        self._limits: dict[str, asyncio.Semaphore] = {}
        self._run = uuid.uuid4().hex[:12]
        """Names this run in each participant's prompt-cache key (see :meth:`client_for`)."""

    def endpoint(self, config: AgentConfig) -> str:
        """The name of the endpoint ``config`` calls: its provider and base URL."""
        return self._pool.key_for(config)

    def client_for(self, config: AgentConfig) -> LLMClient:
        """A client of ``config``'s endpoint; its replies are filed in the call cache under that endpoint
        (a person's are not: a seat a person plays is always asked)."""
        key = self._pool.key_for(config)
        shared = self._pool.shared_limit(key)
        limiter = shared if shared is not None else self._limits.setdefault(key, asyncio.Semaphore(self._max))
        # each seat counts its own draws: identical seats replay their own replies (see dialectic.llm.call_cache)
        cache = self._cache.at(key, seat=config.id) if self._cache is not None and not config.is_human else None
        return LLMClient(
            self._pool.get(config),
            retry=self._retry,
            limiter=limiter,
            max_continuations=self._continuations,
            cache=cache,
            prompt_cache_key=f"dialectic-{self._run}-{config.id}",
        )


def reply_cache(store: DebateStore, settings: DebateSettings) -> ReplyCache | None:
    """The debate's view of the call cache in ``store``: every reply is filed; requests are answered from it
    when ``debate.cache`` is ``read``. ``None`` when the store keeps no call cache."""
    if not isinstance(store, CallCache):
        return None
    return ReplyCache(store, read=settings.cache == "read")


def retry_policy(settings: RetrySettings) -> RetryPolicy:
    """The configured ``debate.retry`` as the policy every LLM call of the debate uses."""
    return RetryPolicy(
        max_attempts=settings.max_attempts,
        base_delay_s=settings.base_delay_ms / 1000,
        max_delay_s=settings.max_delay_ms / 1000,
        jitter_s=settings.jitter_ms / 1000,
        max_retry_after_s=settings.max_retry_after_ms / 1000,
    )


def build_roster(
    config: SystemConfig,
    config_dir: Path,
    pool: ProviderPool,
    retry: RetryPolicy | None = None,
    cache: ReplyCache | None = None,
) -> Roster:
    """The debate's participants; ``retry`` (given by tests and embedders) wins over ``debate.retry``.
    With ``cache``, every client files its replies there (and reads them, as the cache says).

    Under a budget, a participant without ``maxTokens`` replies within the default limit
    (:func:`~dialectic.engine.budget.with_reply_limits`), so the budget can hold back each request's worst case.
    """
    config = with_reply_limits(config)
    settings = config.debate
    seating = _Seating(
        clients=ClientFactory(pool, settings, retry or retry_policy(settings.retry), cache),
        config_dir=config_dir,
        settings=settings,
        kind=settings.problem_kind if settings.problem_kind != "auto" else "design",
    )
    agents: list[DebateAgent] = []
    sources: list[AgentPromptSources] = []
    fallbacks: dict[str, Speaker] = {}
    for cfg in config.participants():
        agent, source, fallback = seating.agent(cfg)
        agents.append(agent)
        sources.append(source)
        if fallback is not None:
            fallbacks[cfg.id] = fallback
    judge, judge_source = seating.judge(config.judge)
    endpoints = {cfg.id: seating.clients.endpoint(cfg) for cfg in (*config.participants(), config.judge)}
    return Roster(
        agents=agents,
        judge=judge,
        settings=settings,
        prompt_sources=PromptSources(agents=sources, judge=judge_source),
        warnings=seating.warnings,
        endpoints=endpoints,
        fallbacks=fallbacks,
    )


@dataclass
class _Seating:
    """Seats one participant at a time: reads its prompt files (noting warnings) and gives it a client."""

    clients: ClientFactory
    config_dir: Path
    settings: DebateSettings
    kind: str
    warnings: list[str] = field(default_factory=list)

    def agent(self, cfg: AgentConfig) -> tuple[DebateAgent, AgentPromptSources, Speaker | None]:
        """An agent, where its prompts came from, and the participant its fallback model plays (if any)."""
        system_file = self._read(cfg.system_prompt_path, f"agent '{cfg.id}' system prompt")
        summary_file = self._read(cfg.summary_prompt_path, f"agent '{cfg.id}' summary prompt")
        clarify_file = self._read(cfg.clarification_prompt_path, f"agent '{cfg.id}' clarification prompt")
        summarization = self._summarization(cfg)
        if cfg.is_human:  # a person keeps the whole debate in view: no summaries are asked of them
            summarization = summarization.model_copy(update={"enabled": False})
        system_prompt = system_prompt_for(cfg, system_file, judge=False, kind=self.kind)
        fallback_config = cfg.fallback_agent()
        fallback = None
        if fallback_config is not None:
            fallback = Speaker(
                config=fallback_config,
                client=self.clients.client_for(fallback_config),
                system_prompt=system_prompt,
                system_source=system_file.source,
                problem_kind=self.kind,
            )
        agent = DebateAgent(
            config=cfg,
            client=self.clients.client_for(cfg),
            system_prompt=system_prompt,
            system_source=system_file.source,
            summary_prompt=summary_file,
            clarification_prompt=clarify_file,
            summarization=summarization,
            problem_kind=self.kind,
        )
        source = AgentPromptSources(
            agent_id=cfg.id,
            role=cfg.role,
            system_prompt=system_file.source,
            summary_prompt=summary_file.source,
            clarification_prompt=clarify_file.source,
        )
        return agent, source, fallback

    def judge(self, cfg: AgentConfig) -> tuple[Judge, AgentPromptSources]:
        """The judge, and where its prompts came from."""
        system_file = self._read(cfg.system_prompt_path, "judge system prompt")
        summary_file = self._read(cfg.summary_prompt_path, "judge summary prompt")
        judge = Judge(
            config=cfg,
            client=self.clients.client_for(cfg),
            system_prompt=system_prompt_for(cfg, system_file, judge=True, kind=self.kind),
            system_source=system_file.source,
            summary_prompt=summary_file,
            summarization=self._summarization(cfg),
            problem_kind=self.kind,
        )
        source = AgentPromptSources(
            agent_id=cfg.id, role=cfg.role, system_prompt=system_file.source, summary_prompt=summary_file.source
        )
        return judge, source

    def _read(self, path: str | None, what: str) -> PromptFile:
        return read_prompt_file(path, self.config_dir, self.warnings, what)

    def _summarization(self, cfg: AgentConfig) -> SummarizationConfig:
        """The debate's summarization settings, with the participant's own over them."""
        return (
            cfg.summarization.apply_to(self.settings.summarization)
            if cfg.summarization
            else self.settings.summarization
        )
