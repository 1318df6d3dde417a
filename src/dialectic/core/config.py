"""Configuration: the shape of ``debate-config.json`` (camelCase), its defaults and validation.

Pure data and pure functions; reading files lives in :mod:`dialectic.loading.config`.
"""

from __future__ import annotations

from typing import Literal, Protocol, TypeVar, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic.alias_generators import to_camel

from dialectic.core import environment
from dialectic.core.bounds import MAX_TOKENS
from dialectic.core.errors import InvalidArgumentsError
from dialectic.core.json_values import JsonValue

DEFAULT_PROVIDER = "openai"
DEFAULT_MODEL = "gpt-4o-mini"
DEFAULT_MODELS: dict[str, str] = {
    "openai": DEFAULT_MODEL,
    "openrouter": "openai/gpt-4o-mini",
    "anthropic": "claude-haiku-4-5",
    "local": "qwen2.5-0.5b",
    "scripted": "scripted-1",
    "human": "person",
}
"""The model an agent gets when its configuration names a built-in provider but no model.

Whether a provider name exists is not checked here: providers can come from plugins, which
only the registry (``dialectic.llm.registry``) knows; the configuration loader checks names
against it and fills a plugin provider's default model.
"""


MAX_WAIT_MS = 86_400_000
"""The longest time in milliseconds a configuration may give a call, a round or a retry: one day."""
MAX_DEADLINE_MS = 30 * MAX_WAIT_MS
"""The longest time a person may be given for a turn: thirty days."""
MAX_COUNT = 1_000
"""The most a count of attempts, questions or concurrent calls may be."""


class ConfigModel(BaseModel):
    """Every configuration section: camelCase keys, and numbers that are finite (``Infinity`` in a file is an
    error, never "no limit"); each number has a range, so a typo cannot ask for a billion of anything."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore", allow_inf_nan=False)

    def to_json_dict(self) -> dict[str, object]:
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


class SummarizationConfig(ConfigModel):
    enabled: bool = True
    threshold: int = Field(default=5000, ge=0, le=100_000_000, description="Characters of history before summarizing.")
    max_length: int = Field(default=2500, ge=1, le=10_000_000, description="Characters the summary is cut to.")
    method: Literal["length-based"] = "length-based"


class SummarizationOverride(ConfigModel):
    """Per-agent summarization settings; unset fields fall back to the debate's."""

    enabled: bool | None = None
    threshold: int | None = Field(default=None, ge=0, le=100_000_000)
    max_length: int | None = Field(default=None, ge=1, le=10_000_000)
    method: Literal["length-based"] | None = None

    def apply_to(self, base: SummarizationConfig) -> SummarizationConfig:
        return base.model_copy(update={k: v for k, v in self.model_dump().items() if v is not None})


MAX_PROBLEM_CHARS = 10_000_000
"""The highest ``limits.maxProblemChars`` may go: a problem is sent whole in every prompt."""
MAX_ROUNDS = 1_000
"""The highest ``limits.maxRounds`` (and ``debate.rounds``) may go."""
MAX_AGENTS = 256
"""The highest ``limits.maxAgents`` (and a team's size) may go."""

MIN_CONTEXT_WINDOW = 256
"""The smallest ``contextWindow`` taken (tokens): below it not even a system prompt fits."""

WireApi = Literal["auto", "chat", "responses"]
WIRE_APIS: tuple[str, ...] = ("auto", "chat", "responses")

HUMAN_PROVIDER = "human"
"""The provider of a seat played by a person (see :mod:`dialectic.engine.seats`)."""
HUMAN_MODEL = DEFAULT_MODELS[HUMAN_PROVIDER]
"""A human seat's model: no model, a person."""


class FallbackModel(ConfigModel):
    """The model that plays a human seat's turn when the seat's ``deadline`` passes."""

    provider: str = Field(min_length=1)
    model: str | None = Field(default=None, min_length=1, description="Unset: the provider's default model.")
    temperature: float | None = Field(default=None, ge=0.0, le=2.0, description="Unset: the seat's temperature.")
    base_url: str | None = None
    api_key_env: str | None = None
    max_tokens: int | None = Field(default=None, ge=1, le=MAX_TOKENS)
    timeout: int | None = Field(default=None, ge=1, le=MAX_WAIT_MS, description="Per-call timeout in milliseconds.")
    api: WireApi = "auto"

    @field_validator("provider")
    @classmethod
    def _normal_provider(cls, value: str) -> str:
        name = value.strip().lower()
        if not name:
            raise ValueError("must name a provider")
        if name == HUMAN_PROVIDER:
            raise ValueError("a fallback is a model: it cannot be another person (provider human)")
        return name


class AgentConfig(ConfigModel):
    id: str = Field(min_length=1)
    name: str = Field(min_length=1)
    role: str = Field(min_length=1)
    model: str = Field(default=DEFAULT_MODEL, min_length=1)
    provider: str = DEFAULT_PROVIDER
    temperature: float = Field(default=0.5, ge=0.0, le=2.0)
    base_url: str | None = None
    api_key_env: str | None = None
    system_prompt_path: str | None = None
    summary_prompt_path: str | None = None
    clarification_prompt_path: str | None = None
    summarization: SummarizationOverride | None = None
    enabled: bool = True
    max_tokens: int | None = Field(default=None, ge=1, le=MAX_TOKENS)
    timeout: int | None = Field(default=None, ge=1, le=MAX_WAIT_MS, description="Per-call timeout in milliseconds.")
    position: str | None = Field(default=None, description="The stance the agent argues: for, against, or words.")
    persona: str | None = Field(default=None, description="A short character description for the agent.")
    vote_weight: float = Field(
        default=1.0, ge=0, le=1_000_000, description="The weight of the agent's vote (rule weighted)."
    )
    api: WireApi = Field(
        default="auto",
        description="Which OpenAI API to speak: auto (Responses on OpenAI's own endpoint, Chat Completions "
        "elsewhere), chat or responses.",
    )
    context_window: int | None = Field(
        default=None,
        le=1_000_000_000,
        description="Tokens the model's context window holds for one request; unset: learned from the server.",
    )
    deadline: int | None = Field(
        default=None,
        ge=1,
        le=MAX_DEADLINE_MS,
        description="A human seat's time to write each turn, in milliseconds; when it passes, the fallback "
        "model plays the turn.",
    )
    fallback: FallbackModel | str | None = Field(
        default=None,
        description="A human seat's: the model that plays its turn when its deadline passes. The judge's: who "
        "writes the synthesis when the judge fails after its retries: an agent's id, auto (unset: a participant "
        "on another model than the judge's first) or off.",
    )

    @property
    def is_human(self) -> bool:
        """Whether a person plays this participant (``provider: human``)."""
        return self.provider == HUMAN_PROVIDER

    @property
    def fallback_model(self) -> FallbackModel | None:
        """A human seat's fallback model (``None`` for the judge's fallback, which names a participant)."""
        return self.fallback if isinstance(self.fallback, FallbackModel) else None

    def fallback_agent(self) -> AgentConfig | None:
        """The participant the fallback model plays in this seat's place: its identity, the fallback's model."""
        fallback = self.fallback_model
        if fallback is None:
            return None
        return self.model_copy(
            update={
                "provider": fallback.provider,
                "model": fallback.model or DEFAULT_MODELS.get(fallback.provider, DEFAULT_MODEL),
                "temperature": fallback.temperature if fallback.temperature is not None else self.temperature,
                "base_url": fallback.base_url,
                "api_key_env": fallback.api_key_env,
                "max_tokens": fallback.max_tokens,
                "timeout": fallback.timeout,
                "api": fallback.api,
                "context_window": None,
                "deadline": None,
                "fallback": None,
            }
        )

    @model_validator(mode="before")
    @classmethod
    def _model_for_provider(cls, data: JsonValue) -> JsonValue:
        if isinstance(data, dict) and data.get("model") is None:
            provider = str(data.get("provider") or DEFAULT_PROVIDER).strip().lower()
            if provider in DEFAULT_MODELS:
                return {**data, "model": DEFAULT_MODELS[provider]}
        return data

    @field_validator("context_window")
    @classmethod
    def _whole_window(cls, value: int | None) -> int | None:
        if value is not None and value < MIN_CONTEXT_WINDOW:
            raise ValueError(f"must be a number of tokens, at least {MIN_CONTEXT_WINDOW} (got {value})")
        return value

    @model_validator(mode="after")
    def _reply_fits_window(self) -> AgentConfig:
        if self.context_window is not None and self.max_tokens is not None and self.max_tokens >= self.context_window:
            raise ValueError(
                f"maxTokens ({self.max_tokens}) must be smaller than contextWindow ({self.context_window}): "
                "the reply shares the window with the prompt"
            )
        return self

    @field_validator("provider")
    @classmethod
    def _normal_provider(cls, value: str) -> str:
        name = value.strip().lower()
        if not name:
            raise ValueError("must name a provider")
        return name

    @model_validator(mode="after")
    def _deadline_with_fallback(self) -> AgentConfig:
        if not self.is_human:
            # a participant's name as fallback is the judge's setting: SystemConfig checks who may have one
            if self.deadline is not None or self.fallback_model is not None:
                raise ValueError("deadline and fallback are for a seat played by a person (provider: human)")
            return self
        if isinstance(self.fallback, str):
            raise ValueError(
                'a human seat\'s fallback is a model, e.g. "fallback": {"provider": "openai", "model": "gpt-4o-mini"}'
            )
        if self.deadline is not None and self.fallback is None:
            raise ValueError(
                "deadline needs a fallback model to play the turn when it passes "
                '(e.g. "fallback": {"provider": "openai", "model": "gpt-4o-mini"})'
            )
        if self.fallback is not None and self.deadline is None:
            raise ValueError("fallback plays a turn when the seat's deadline passes: set deadline (milliseconds)")
        fallback = self.fallback_agent()
        if fallback is not None and fallback.model == self.model:
            raise ValueError(f"fallback.model must name a model, not the seat's own '{self.model}'")
        return self

    @field_validator("role")
    @classmethod
    def _normal_role(cls, value: str) -> str:
        return value.strip().lower()


DebateFormat = Literal[
    "auto",
    "adaptive",
    "critique-refine",
    "free-form",
    "round-limited",
    "structured",
    "convergence-seeking",
    "simultaneous",
    "vote",
    "council",
    "correction",
]
PROBLEM_KINDS: tuple[str, ...] = ("auto", "design", "reasoning")
"""``debate.problemKind`` (see :mod:`dialectic.engine.problem_kind`)."""

FORMATS: tuple[str, ...] = get_args(DebateFormat)
"""Every ``debate.format``, in the order help texts list them (the literal above is the one list)."""
AUTO_FORMATS: dict[str, str] = {"reasoning": "adaptive", "design": "critique-refine"}
"""What ``format: auto`` runs for each problem kind: a question with one right answer gets the adaptive
answer protocol (vote-first, see :mod:`dialectic.engine.adaptive`), a design problem critique-refine."""


def resolved_format(debate_format: str, problem_kind: str) -> str:
    """The protocol a debate runs: ``auto`` resolved by the problem's kind, any other format as given."""
    return AUTO_FORMATS.get(problem_kind, "critique-refine") if debate_format == "auto" else debate_format


TerminationType = Literal["fixed", "convergence", "quality", "judge", "any"]


class TerminationCondition(ConfigModel):
    """When a debate may stop before its last round.

    ``fixed``: never. ``convergence``: the participants' latest positions are semantically at least
    ``threshold`` percent similar. ``quality``: the judge's rubric score for the round reaches
    ``threshold`` (0–100, i.e. the 0–10 score × 10). ``judge``: the judge says the debate should not
    continue. ``any``: whichever of those comes first.
    """

    type: TerminationType = "fixed"
    threshold: int = Field(default=80, ge=0, le=100)


class VoteSettings(ConfigModel):
    """How participants vote on the final proposals (``format: vote``)."""

    rule: Literal["majority", "supermajority", "weighted", "confidence"] = "majority"
    threshold: float = Field(default=2 / 3, gt=0, le=1, description="Share needed under supermajority.")
    exclude_own: bool = Field(default=True, description="A participant may not vote for its own proposal.")


ANSWER_BUDGET = (2, 64)
"""The fewest and most blind answers ``answers.maxAnswers`` (and ``--max-answers``) accepts."""


class AnswerSettings(ConfigModel):
    """The adaptive answer protocol's budget (``format: adaptive``; ``auto`` on a question with one answer)."""

    max_answers: int = Field(
        default=5,
        ge=ANSWER_BUDGET[0],
        le=ANSWER_BUDGET[1],
        description="The most blind answers drawn before the vote. Where the model's answers scatter, a larger "
        "budget keeps self-consistency's accuracy at about its cost (docs/bench.md: dates, seed 2028); agreeing "
        "answers still stop at two.",
    )


class RetrySettings(ConfigModel):
    """How a failed LLM call is retried: exponential backoff with jitter (``llm.retry.RetryPolicy``)."""

    max_attempts: int = Field(default=4, ge=1, le=100, description="Calls per request, the first one included.")
    base_delay_ms: int = Field(
        default=500, ge=0, le=MAX_WAIT_MS, description="Wait after the first failure; doubles each time."
    )
    max_delay_ms: int = Field(default=20_000, ge=0, le=MAX_WAIT_MS, description="Cap of the exponential wait.")
    jitter_ms: int = Field(default=250, ge=0, le=MAX_WAIT_MS, description="Random extra wait, so retries spread out.")
    max_retry_after_ms: int = Field(
        default=60_000, ge=0, le=MAX_WAIT_MS, description="Cap on a server's Retry-After hint."
    )


MAX_BUDGET_USD = 1_000_000.0
"""The largest budget in US dollars a configuration or ``--budget-usd`` may set."""
MAX_BUDGET_TOKENS = 1_000_000_000_000
"""The largest budget in tokens a configuration or ``--budget-tokens`` may set."""


class BudgetSettings(ConfigModel):
    """Ceilings on what a debate may spend: a call that could pass one is not made (:mod:`dialectic.engine.budget`)."""

    max_cost_usd: float | None = Field(
        default=None, gt=0, le=MAX_BUDGET_USD, description="US dollars the debate may spend in all."
    )
    max_tokens: int | None = Field(
        default=None, ge=1, le=MAX_BUDGET_TOKENS, description="Tokens (input + output) the debate may use in all."
    )

    @property
    def limited(self) -> bool:
        return self.max_cost_usd is not None or self.max_tokens is not None


class ModelPrice(ConfigModel):
    """US dollars per million tokens; ``cachedInput`` (prompt-cache reads) and ``cacheWrite`` (prompt-cache
    writes, which Anthropic charges at 1.25× its input price) default to the input price."""

    input: float = Field(ge=0, le=1_000_000)
    output: float = Field(ge=0, le=1_000_000)
    cached_input: float | None = Field(default=None, ge=0, le=1_000_000)
    cache_write: float | None = Field(default=None, ge=0, le=1_000_000)


ContextMode = Literal["tools", "paste", "off"]
CONTEXT_MODES: tuple[str, ...] = ("tools", "paste", "off")


class ContextSettings(ConfigModel):
    """The context directory agents may read (``--context DIR``) and how they get it.

    ``tools``: agents read it through tools (``list_files``, ``file_read``, ``context_search``);
    ``paste``: its text files are pasted into the prompts (up to 40,000 characters); ``off``: not
    used. Unset: ``tools`` when every agent's provider supports tool calling, else ``paste``.
    A debate saves the mode it resolved, so a resumed debate reads its directory the same way.
    """

    dir: str | None = Field(default=None, description="The context directory (relative: to the config file).")
    mode: ContextMode | None = None
    max_tool_calls: int = Field(default=6, ge=1, le=100, description="Tool calls per contribution at most.")
    judge_tools: bool = Field(default=False, description="The judge may read the directory through tools too.")
    max_read_chars: int | None = Field(
        default=None,
        ge=1_000,
        le=1_000_000,
        description="Characters the tool calls of one contribution may return in all (default 48,000; "
        "12,000 when every agent runs the local model, whose window is small).",
    )


ContextStrategy = Literal["summarize", "slide", "fail"]
CacheMode = Literal["off", "read"]
"""``debate.cache``: whether a new debate's requests are answered from the call cache (every reply is filed)."""
MemoryMode = Literal["off", "on"]
"""``debate.memory``: whether round 1 is given the outcomes of similar past debates (see ``docs/memory.md``)."""
CONTEXT_STRATEGIES: tuple[str, ...] = ("summarize", "slide", "fail")
MIN_TEAM_SIZE = 2


class TeamSettings(ConfigModel):
    """``debate.team``: the debate's agents are picked from a pool file by rating and calibration
    (see ``docs/team.md``); the configuration's own ``agents`` are then not used."""

    pool: str | None = Field(
        default=None,
        min_length=1,
        description="A JSON file of agent configurations to pick from (relative: to the config file).",
    )
    size: int = Field(
        ge=MIN_TEAM_SIZE, le=MAX_AGENTS, description="How many agents of the pool take part (at least 2)."
    )
    agents: list[AgentConfig] = Field(
        default_factory=list,
        description="The pool itself, inline; filled from the pool file when the configuration is loaded.",
    )

    @field_validator("agents")
    @classmethod
    def _unique_ids(cls, agents: list[AgentConfig]) -> list[AgentConfig]:
        return unique_ids(agents, "pool agent")

    @model_validator(mode="after")
    def _pool_and_size(self) -> TeamSettings:
        if self.pool is None and not self.agents:
            raise ValueError("a team needs a pool: pool (a JSON file of agents) or agents (inline)")
        enabled = sum(agent.enabled for agent in self.agents)
        if self.agents and self.size > enabled:
            raise ValueError(f"size {self.size} is more than the pool's {enabled} enabled agent(s)")
        return self

    def pool_agents(self) -> list[AgentConfig]:
        """The enabled agents of the pool, in the pool's order."""
        return [agent for agent in self.agents if agent.enabled]


class DebateSettings(ConfigModel):
    rounds: int = Field(default=3, ge=1, le=MAX_ROUNDS)
    termination_condition: TerminationCondition = Field(default_factory=TerminationCondition)
    synthesis_method: Literal["judge"] = "judge"
    include_full_history: bool = True
    timeout_per_round: int = Field(default=600_000, ge=1, le=MAX_WAIT_MS, description="Milliseconds a round may take.")
    summarization: SummarizationConfig = Field(default_factory=SummarizationConfig)
    interactive_clarifications: bool = False
    clarifications_max_per_agent: int = Field(default=5, ge=1, le=100)
    clarifications_max_iterations: int = Field(default=3, ge=1, le=100)
    max_concurrency: int = Field(
        default=64,
        ge=1,
        le=MAX_COUNT,
        description=(
            "Concurrent calls per provider endpoint: generous, so a debate runs at the speed of its "
            "dependencies; rate limits are met by backing off on the provider's Retry-After."
        ),
    )
    min_agents: int = Field(
        default=2,
        ge=1,
        le=MAX_AGENTS,
        description="Agents that must remain for the debate to go on when failing agents are dropped.",
    )
    max_continuations: int = Field(
        default=1,
        ge=0,
        le=100,
        description="Times a reply cut off by maxTokens is continued before it is marked truncated.",
    )
    retry: RetrySettings = Field(default_factory=RetrySettings)
    format: DebateFormat = Field(
        default="auto",
        description="The deliberation protocol; auto: adaptive for a question with one right answer, "
        "critique-refine for a design problem.",
    )
    personas: Literal["off", "auto"] = Field(
        default="off", description="auto: the judge assigns positions and personas before round 1."
    )
    persona_strategy: Literal["binary", "spectrum", "multi-perspective"] = "multi-perspective"
    assessment: Literal["auto", "on", "off"] = Field(
        default="auto", description="The judge's structured assessment of each round (auto: when needed)."
    )
    consensus_guard: Literal["auto", "on", "off"] = Field(
        default="auto",
        description="The hollow-consensus guard: a challenge to the consensus (the strongest objection nobody "
        "raised) and one more round. auto: when positions converge within the first rounds with little evidence "
        "or mere repetition and that would end the debate; on: whenever positions converge; off: never.",
    )
    rubric_weights: dict[str, float] | None = Field(
        default=None, description="Weights of the judge's rubric criteria (default: the seed's)."
    )
    neutral_labels: bool = Field(
        default=True, description="The judge sees participants under neutral labels, in shuffled order."
    )
    verdict: Literal["auto", "on", "off"] = Field(
        default="auto",
        description="The judge's final verdict beside the solution (auto: every format but critique-refine, "
        "adaptive, council and correction).",
    )
    vote: VoteSettings = Field(default_factory=VoteSettings)
    answers: AnswerSettings = Field(default_factory=AnswerSettings)
    problem_kind: Literal["auto", "design", "reasoning"] = Field(
        default="auto", description="design: a design document; reasoning: one right answer, worked step by step."
    )
    budget: BudgetSettings = Field(default_factory=BudgetSettings)
    context: ContextSettings = Field(default_factory=ContextSettings)
    context_strategy: ContextStrategy = Field(
        default="summarize",
        description="What happens when a prompt passes 90% of a participant's context window: summarize older "
        "rounds, slide to the last rounds that fit, or fail (resumable with a larger window).",
    )
    cache: CacheMode = Field(
        default="off",
        description="read: a request sent before with the same inputs is answered from the call cache instead "
        "of the provider; off: every request is sent (every reply is filed in the cache either way).",
    )
    memory: MemoryMode = Field(
        default="off",
        description="on: before round 1, the outcomes of the most similar past debates in the store are "
        "given to the participants (see docs/memory.md); off: nothing from other debates.",
    )
    memory_count: int = Field(default=3, ge=1, le=20, description="Past debates given to round 1 at most.")
    memory_max_chars: int = Field(
        default=3_000, ge=200, le=50_000, description="Characters the past debates may take of a round-1 prompt."
    )
    memory_min_similarity: float = Field(
        default=0.2, ge=0, le=1, description="How alike (0–1) a past debate's problem must be to be recalled."
    )
    team: TeamSettings | None = Field(
        default=None,
        description="Pick the agents from a pool by rating and calibration, keeping the team diverse "
        "(see docs/team.md); unset: the configured agents take part.",
    )

    @field_validator("memory", mode="before")
    @classmethod
    def _memory_switch(cls, value: object) -> object:
        """YAML reads a bare ``on``/``off`` as a boolean: take it as the word."""
        if isinstance(value, bool):
            return "on" if value else "off"
        return value

    def termination(self) -> TerminationCondition:
        """The termination condition in force: the configured one, or the format's own default."""
        if "termination_condition" in self.model_fields_set:
            return self.termination_condition
        return TerminationCondition(type=FORMAT_TERMINATION.get(self.format, "fixed"))


FORMAT_TERMINATION: dict[str, TerminationType] = {
    "free-form": "judge",
    "convergence-seeking": "convergence",
}
"""Formats whose own idea of stopping is not ``fixed`` (used when no terminationCondition is configured)."""

FORMAT_MIN_ROUNDS: dict[str, tuple[int, str]] = {
    "structured": (2, "it opens in the first round and closes in the last"),
}
"""Formats that need more than one round, with the reason given to a user who asked for fewer."""


def min_rounds(debate_format: str) -> int:
    return FORMAT_MIN_ROUNDS.get(debate_format, (1, ""))[0]


def too_few_rounds(debate: DebateSettings) -> str | None:
    """Why ``debate.rounds`` is too few for ``debate.format``, or ``None`` when it is enough."""
    needed = min_rounds(debate.format)
    if debate.rounds >= needed:
        return None
    reason = FORMAT_MIN_ROUNDS[debate.format][1]
    return f"the {debate.format} format needs at least {needed} rounds ({reason}), not {debate.rounds}"


class LimitsConfig(ConfigModel):
    """Ceilings that stop a typo (``--rounds 1000000000``, the wrong file) before it costs calls.

    Raise them in the config file's ``limits`` section when a debate really needs more.
    """

    max_problem_chars: int = Field(
        default=100_000, ge=1, le=MAX_PROBLEM_CHARS, description="Characters a problem may have."
    )
    max_rounds: int = Field(default=20, ge=1, le=MAX_ROUNDS, description="Rounds a debate may run.")
    max_agents: int = Field(
        default=12, ge=1, le=MAX_AGENTS, description="Agents that may take part (the judge not counted)."
    )


def check_problem_length(text: str, limits: LimitsConfig) -> None:
    """The one rule on a problem's length, for every way a problem comes in (the argument, ``--problem-file``,
    a batch line, the web API, an MCP call, the Python API): ``InvalidArgumentsError`` past ``maxProblemChars``."""
    if len(text) > limits.max_problem_chars:
        raise InvalidArgumentsError(
            f"the problem has {len(text):,} characters, more than the limit of {limits.max_problem_chars:,}; "
            "shorten it, or raise limits.maxProblemChars in the config file"
        )


def problem_text(problem: str, limits: LimitsConfig) -> str:
    """``problem`` trimmed, not empty and within ``limits`` (:func:`check_problem_length`)."""
    text = problem.strip()
    if not text:
        raise InvalidArgumentsError("the problem is empty")
    check_problem_length(text, limits)
    return text


DEFAULT_HOOK_SECRET_ENV = environment.HOOK_SECRET
"""The environment variable a webhook's signing secret is read from when ``secretEnv`` names none."""


class WebhookTarget(ConfigModel):
    """A receiver of the POST sent when a debate finishes (``hooks.onComplete``; a bare string is its url)."""

    url: str = Field(min_length=1, description="An http:// or https:// URL.")
    secret_env: str = Field(
        default=DEFAULT_HOOK_SECRET_ENV,
        min_length=1,
        description="The environment variable holding the HMAC-SHA256 signing secret (unset: sent unsigned).",
    )

    @model_validator(mode="before")
    @classmethod
    def _bare_url(cls, value: JsonValue) -> JsonValue:
        return {"url": value} if isinstance(value, str) else value

    @field_validator("url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        url = value.strip()
        scheme, _, rest = url.partition("://")
        if scheme.lower() not in ("http", "https") or not rest.strip("/"):
            raise ValueError(f"'{value}' is not an http:// or https:// URL")
        return url


class HookSettings(ConfigModel):
    """What runs when a debate finishes (completed, failed or interrupted): webhooks and a command.

    Hooks never change a debate: they run after its state is saved, a failure is a warning, and a
    process waits for them at most ``waitMs`` (webhooks) and ``commandTimeoutMs`` (the command).
    """

    on_complete: list[WebhookTarget] = Field(
        default_factory=list, description="Webhooks POSTed a signed JSON summary of each finished debate."
    )
    on_complete_command: str | None = Field(
        default=None,
        min_length=1,
        description="A command run (without a shell) when a debate finishes; it gets DIALECTIC_DEBATE_ID, "
        "DIALECTIC_STATUS, DIALECTIC_EXPORT and DIALECTIC_REPORT in its environment.",
    )
    max_attempts: int = Field(default=4, ge=1, le=10, description="POSTs per webhook, the first one included.")
    backoff_ms: int = Field(default=250, ge=0, le=60_000, description="Wait after the first failure; doubles.")
    wait_ms: int = Field(
        default=5_000, ge=0, le=300_000, description="The most a webhook's delivery takes, retries included."
    )
    command_timeout_ms: int = Field(default=30_000, ge=1, le=3_600_000, description="The command's time limit.")

    @property
    def active(self) -> bool:
        """Whether anything runs when a debate finishes."""
        return bool(self.on_complete) or self.on_complete_command is not None


class HasId(Protocol):
    id: str


Identified = TypeVar("Identified", bound=HasId)


def unique_ids(items: list[Identified], what: str) -> list[Identified]:
    """Validator body: ``items`` unchanged, or ``ValueError`` naming the first repeated id."""
    seen: set[str] = set()
    for item in items:
        if item.id in seen:
            raise ValueError(f"duplicate {what} id '{item.id}'")
        seen.add(item.id)
    return items


JUDGE_FALLBACK_AUTO = "auto"
JUDGE_FALLBACK_OFF = "off"
JUDGE_FALLBACK_WORDS: tuple[str, ...] = (JUDGE_FALLBACK_AUTO, JUDGE_FALLBACK_OFF)
"""``judge.fallback``'s words: ``auto`` (the default) lets a participant write the synthesis when the judge
fails, preferring one on another model than the judge's; ``off`` lets the judge's failure fail the debate."""


def default_agents() -> list[AgentConfig]:
    return [
        AgentConfig(id="agent-architect", name="System Architect", role="architect", temperature=0.5),
        AgentConfig(id="agent-performance", name="Performance Engineer", role="performance", temperature=0.5),
        AgentConfig(id="agent-kiss", name="Simplicity Advocate", role="kiss", temperature=0.5),
    ]


def default_judge() -> AgentConfig:
    return AgentConfig(id="judge-main", name="Technical Judge", role="generalist", temperature=0.3)


class SystemConfig(ConfigModel):
    agents: list[AgentConfig] = Field(default_factory=default_agents)
    judge: AgentConfig = Field(default_factory=default_judge)
    debate: DebateSettings = Field(default_factory=DebateSettings)
    limits: LimitsConfig = Field(default_factory=LimitsConfig)
    pricing: dict[str, ModelPrice] = Field(default_factory=dict)
    """``provider/model`` → price, over the built-in table (:mod:`dialectic.core.pricing`)."""
    hooks: HookSettings = Field(default_factory=HookSettings)
    """Webhooks and a command run when a debate finishes (:mod:`dialectic.reporting.hooks`)."""
    allow_outside_prompts: bool = False
    """Set by ``--allow-outside-prompts`` only (never read from a file); saved with the debate for ``resume``."""

    @field_validator("agents")
    @classmethod
    def _unique_ids(cls, agents: list[AgentConfig]) -> list[AgentConfig]:
        return unique_ids(agents, "agent")

    @field_validator("judge")
    @classmethod
    def _judge_is_a_model(cls, judge: AgentConfig) -> AgentConfig:
        if judge.is_human:
            raise ValueError("the judge is a model: provider human is for agents (a seat played by a person)")
        return judge

    @model_validator(mode="after")
    def _judge_fallback(self) -> SystemConfig:
        pool = self.debate.team.agents if self.debate.team is not None else []
        for where, agent in (*((f"agents.{i}", a) for i, a in enumerate(self.agents)), *(("team", a) for a in pool)):
            if isinstance(agent.fallback, str):
                raise ValueError(
                    f"{where}.fallback: only the judge names a participant as its fallback "
                    "(a human seat's fallback is a model)"
                )
        chosen = self.judge.fallback
        if not isinstance(chosen, str) or chosen in JUDGE_FALLBACK_WORDS:
            return self
        by_id = {a.id: a for a in [*self.agents, *pool]}
        named = by_id.get(chosen)
        if named is None:
            raise ValueError(
                f"judge.fallback: no agent '{chosen}' (give an agent's id, {' or '.join(JUDGE_FALLBACK_WORDS)}; "
                f"agents: {', '.join(by_id) or 'none'})"
            )
        if named.is_human:
            raise ValueError(f"judge.fallback: '{chosen}' is a seat a person plays; name an agent a model plays")
        return self

    @field_validator("pricing")
    @classmethod
    def _provider_and_model(cls, pricing: dict[str, ModelPrice]) -> dict[str, ModelPrice]:
        for key in pricing:
            provider, _, model = key.partition("/")
            if not provider.strip() or not model.strip():
                raise ValueError(f"'{key}' must be written provider/model, e.g. openai/gpt-4o-mini")
        return pricing

    def participants(self) -> list[AgentConfig]:
        """Enabled agents, in configured order."""
        return [a for a in self.agents if a.enabled]

    def eligible(self) -> list[AgentConfig]:
        """The agents that may take part: the enabled agents of the team's pool when ``debate.team`` picks
        them (any may be picked), else the enabled configured agents."""
        team = self.debate.team
        return team.pool_agents() if team is not None else self.participants()

    def fallbacks(self) -> list[AgentConfig]:
        """The fallback models of the eligible human seats (:meth:`eligible`), as the participants they play
        (see :meth:`AgentConfig.fallback_agent`): their providers, keys and prices are checked with the others'."""
        return [f for a in self.eligible() if (f := a.fallback_agent()) is not None]

    def template_agent(self) -> AgentConfig:
        """The participant a new agent copies its provider and model from: the first enabled agent a
        model plays, else the judge."""
        return next((a for a in self.participants() if not a.is_human), self.judge)


def with_cache(config: SystemConfig, mode: CacheMode) -> SystemConfig:
    """``config`` with ``debate.cache`` set to ``mode`` (``dialectic debate --cache``, ``dialectic replay``)."""
    return config.model_copy(update={"debate": config.debate.model_copy(update={"cache": mode})})
