"""What every arm of a bench run needs, shared by the arms and the dialectic arm."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from dialectic.bench.draws import SharedDraws
from dialectic.core.config import AgentConfig, SystemConfig
from dialectic.llm.registry import ProviderPool
from dialectic.llm.retry import RetryPolicy


@dataclass(frozen=True)
class ArmEnv:
    """What every arm needs: the bench agents, the sampling settings and the shared providers."""

    agents: tuple[AgentConfig, ...]
    """Sampling arms use the first; debate agent ``i`` uses ``agents[i % len(agents)]``."""
    temperature: float
    max_tokens: int | None
    pool: ProviderPool
    retry: RetryPolicy
    dialectic_config: SystemConfig
    config_dir: Path
    draws: SharedDraws | None = field(default_factory=SharedDraws)
    """The run's shared samples (:mod:`dialectic.bench.draws`); ``None``: every arm asks for its own."""
