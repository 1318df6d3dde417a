"""The evaluator configuration (``eval-config.json``): its camelCase shape, validation and loading.

Any problem with the file is a :class:`~dialectic.core.errors.ConfigError` (exit 4) whose message
names the file and the offending field in the file's own spelling (``agents[1].timeout: ...``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError, field_validator

from dialectic.core.config import AgentConfig, ConfigModel, unique_ids
from dialectic.core.errors import ConfigError
from dialectic.core.files import EVAL_CONFIG_FILE, parse_json, read_user_text
from dialectic.llm.registry import known_providers, unknown_provider
from dialectic.loading.config import describe_validation_error

EVALUATOR_ROLE = "evaluator"
DEFAULT_EVAL_TEMPERATURE = 0.1
"""Low, so repeated evaluations of the same debate differ as little as the model allows."""


class EvaluatorConfig(ConfigModel):
    id: str = Field(min_length=1)
    name: str = Field(min_length=1)
    model: str = Field(min_length=1)
    provider: str
    system_prompt_path: str | None = None
    """A plain-text system prompt, relative to the config file."""
    user_prompt_path: str | None = None
    """A Jinja2 user prompt template (same variables as the built-in one), relative to the config file."""
    timeout: int | None = Field(default=None, ge=1, description="Per-call timeout in milliseconds.")
    enabled: bool = True
    temperature: float = Field(default=DEFAULT_EVAL_TEMPERATURE, ge=0.0, le=2.0)
    base_url: str | None = None
    api_key_env: str | None = None

    @field_validator("provider")
    @classmethod
    def _known_provider(cls, value: str) -> str:
        name = value.strip().lower()
        if name not in known_providers():
            raise ValueError(unknown_provider(value))
        return name

    def agent_config(self) -> AgentConfig:
        """The same endpoint as a debate agent's configuration, which is what the provider pool builds from."""
        return AgentConfig(
            id=self.id,
            name=self.name,
            role=EVALUATOR_ROLE,
            model=self.model,
            provider=self.provider,
            temperature=self.temperature,
            base_url=self.base_url,
            api_key_env=self.api_key_env,
            timeout=self.timeout,
        )


class EvalConfig(ConfigModel):
    agents: list[EvaluatorConfig] = Field(min_length=1)
    max_concurrency: int = Field(default=4, ge=1, description="Concurrent calls per provider endpoint.")

    @field_validator("agents")
    @classmethod
    def _unique_ids(cls, agents: list[EvaluatorConfig]) -> list[EvaluatorConfig]:
        return unique_ids(agents, "evaluator")

    def evaluators(self) -> list[EvaluatorConfig]:
        """The enabled evaluators, in configured order."""
        return [a for a in self.agents if a.enabled]


@dataclass(frozen=True)
class LoadedEvalConfig:
    config: EvalConfig
    path: Path
    directory: Path
    """Where ``systemPromptPath`` and ``userPromptPath`` are resolved: the config file's directory."""


def load_eval_config(path: Path) -> LoadedEvalConfig:
    """Read and validate ``path``; every problem is a :class:`ConfigError`."""
    config = parse_eval_config(read_user_text(path, EVAL_CONFIG_FILE), path)
    if not config.evaluators():
        raise ConfigError(f'no enabled evaluator in {path}: set "enabled": true on at least one agent')
    return LoadedEvalConfig(config, path, path.expanduser().absolute().parent)


def parse_eval_config(text: str, path: Path) -> EvalConfig:
    """Validate the JSON ``text`` of ``path`` (the path is only used in messages)."""
    try:
        data: Any = parse_json(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"invalid JSON in {path} at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    if not isinstance(data, dict):
        raise ConfigError(f'eval config {path} must hold an object with an "agents" list at the top level')
    try:
        return EvalConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(f"invalid eval config in {path}: {describe_validation_error(exc)}") from None
