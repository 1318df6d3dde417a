"""One exception tree for the whole package.

Every error a user can meet derives from :class:`DialecticError` and carries the
process exit code the CLI translates it to. Code below the CLI raises these and
never calls ``sys.exit``; the CLI is the only boundary that turns them into a
one-line message and an exit status.
"""

from __future__ import annotations

from dialectic.core.redaction import redact

EXIT_SUCCESS = 0
EXIT_GENERAL_ERROR = 1
EXIT_INVALID_ARGS = 2
EXIT_PROVIDER_ERROR = 3
EXIT_CONFIG_ERROR = 4


class DialecticError(Exception):
    """Base of every error dialectic raises on purpose."""

    exit_code: int = EXIT_GENERAL_ERROR
    stop_reason: str | None = None
    """Saved as the failed debate's reason when this error stopped it, if the user acts on it (``budget``)."""

    def __init__(self, message: str, *, detail: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.detail = detail
        self.debate_id: str | None = None
        """Set by the engine when the error stopped a saved debate (so the CLI can say where it is)."""

    def __str__(self) -> str:
        return self.message


class InvalidArgumentsError(DialecticError):
    """The user's command line or input files cannot be used."""

    exit_code = EXIT_INVALID_ARGS


class ConfigError(DialecticError):
    """The configuration is malformed, inconsistent or incomplete."""

    exit_code = EXIT_CONFIG_ERROR


class MissingApiKeyError(ConfigError):
    """A configured provider needs an API key that is not in the environment."""

    def __init__(self, provider: str, env_var: str) -> None:
        super().__init__(
            f"provider '{provider}' needs an API key: set the environment variable {env_var} (or put it in a .env file)"
        )
        self.provider = provider
        self.env_var = env_var


class DebateNotFoundError(InvalidArgumentsError):
    """No stored debate has the given id."""


class DebateStateError(InvalidArgumentsError):
    """The debate exists but cannot do what was asked (e.g. resume a completed one)."""


class DebateBusyError(InvalidArgumentsError):
    """Another live process runs this debate (it holds the debate's lease); a web API answers 409."""


class LeaseLostError(DebateBusyError):
    """This run's lease was taken over by another process; the run stopped without writing on."""


class StoreError(DialecticError):
    """The debate store could not be read or written.

    ``unreachable``: the store's server could not be reached or went away (a connection refused or cut,
    a server shutting down): nothing was written, and the same write may succeed once it is back.
    """

    unreachable: bool = False


class BudgetExceeded(DialecticError):
    """The next call could pass the debate's budget, so it was not made; the debate stops, resumable.

    Exit 3, as when a provider stops a debate: the run ended on the way to a model. Not a
    :class:`ProviderError`, so nothing that copes with a failing call (a second chance, dropping
    an agent) catches it: the whole debate stops at once.
    """

    exit_code = EXIT_PROVIDER_ERROR
    stop_reason = "budget"


class WindowFull(DialecticError):
    """A prompt passed 90% of its participant's context window under ``debate.contextStrategy: fail``.

    The debate stops at once, saved as failed and resumable (with a larger window: ``contextWindow``
    in the configuration, or ``dialectic resume ID --context-window TOKENS``). Exit 3, as when a
    provider stops a debate; like :class:`BudgetExceeded`, not a :class:`ProviderError`, so nothing
    that copes with a failing call (a second chance, dropping an agent) catches it.
    """

    exit_code = EXIT_PROVIDER_ERROR
    stop_reason = "window"


class ProviderError(DialecticError):
    """An LLM provider failed. ``retryable`` says whether trying again may help."""

    exit_code = EXIT_PROVIDER_ERROR
    retryable: bool = False

    def __init__(
        self,
        message: str,
        *,
        provider: str | None = None,
        status_code: int | None = None,
        detail: str | None = None,
    ) -> None:
        # A provider's words may echo the request's credentials: they are redacted before anyone sees or saves them.
        super().__init__(redact(message), detail=redact(detail) if detail else detail)
        self.provider = provider
        self.status_code = status_code


class ProviderAuthError(ProviderError):
    """The provider rejected the credentials (401/403)."""


class ModelNotFound(ProviderError):
    """The provider does not know the requested model (404 on a model)."""


class BadRequest(ProviderError):
    """The provider rejected the request as invalid (400/422)."""


class ContextWindowExceeded(BadRequest):
    """The prompt does not fit the model's context window.

    ``window`` and ``prompt_tokens`` are the window and the prompt's size in tokens when the server
    said them (llama.cpp's server does: ``n_ctx`` and ``n_prompt_tokens``), else ``None``.
    """

    def __init__(
        self,
        message: str,
        *,
        provider: str | None = None,
        status_code: int | None = None,
        detail: str | None = None,
        window: int | None = None,
        prompt_tokens: int | None = None,
    ) -> None:
        super().__init__(message, provider=provider, status_code=status_code, detail=detail)
        self.window = window
        self.prompt_tokens = prompt_tokens


class ToolsUnsupported(BadRequest):
    """The endpoint rejected a request because it offered tools (a 400 whose message speaks of tools or functions).

    Raised for OpenAI-compatible servers (``baseUrl``) that do not do function calling. It must
    not fail a debate: a caller running a tool loop catches it and falls back to pasting the
    context into the prompt, as ``debate.context.mode: paste`` does. ``endpoint`` is the server's
    base URL, also named in the message. Not retryable: the same request fails the same way.
    """

    def __init__(self, message: str, *, endpoint: str, **kwargs: object) -> None:
        super().__init__(message, **kwargs)  # type: ignore[arg-type]
        self.endpoint = endpoint


class RateLimited(ProviderError):
    """429: too many requests. ``retry_after`` is the server's hint in seconds."""

    retryable = True

    def __init__(self, message: str, *, retry_after: float | None = None, **kwargs: object) -> None:
        super().__init__(message, **kwargs)  # type: ignore[arg-type]
        self.retry_after = retry_after


class ProviderUnavailable(ProviderError):
    """5xx or a connection failure: the provider may recover."""

    retryable = True


class ProviderUnreachable(ProviderUnavailable):
    """No connection could be made to the provider (nothing listening there, a host that does not resolve).

    Retried like any unavailability; once the retries run out, every call to that address would fail
    alike, so a benchmark run stops (resumable) instead of recording item after item as failed.
    """


class ProviderTimeout(ProviderError):
    """The call took longer than its per-call timeout."""

    retryable = True


class InvalidResponse(ProviderError):
    """The provider answered, but not with something usable (malformed body, bad JSON)."""

    retryable = True


class DebateTimeoutError(ProviderError):
    """The debate went ``timeoutPerRound`` without finishing any work (a stalled round).

    A provider failure (exit 3): the calls of the round did not finish in time. The message says
    what to do; the debate keeps what was saved and can be resumed.
    """

    HINT = (
        "raise debate.timeoutPerRound (milliseconds) in the configuration if the models were still answering, "
        "or check their endpoints if they had stopped"
    )

    def __init__(self, message: str, *, detail: str | None = None) -> None:
        super().__init__(f"{message} ({self.HINT})", detail=detail)


class RetriesExhausted(ProviderError):
    """A retryable failure kept happening until the retry budget ran out."""

    def __init__(self, last: ProviderError, attempts: int) -> None:
        super().__init__(
            f"{last.message} (gave up after {attempts} attempts)",
            provider=last.provider,
            status_code=last.status_code,
            detail=last.detail,
        )
        self.last = last
        self.attempts = attempts


class TooFewAgentsError(ProviderError):
    """Dropping agents whose calls kept failing left fewer than ``debate.minAgents``.

    ``cause`` is the failure that dropped the last agent: callers that sort errors by kind
    (is it the credentials? the model?) look at it.
    """

    def __init__(self, message: str, *, cause: ProviderError) -> None:
        super().__init__(message, provider=cause.provider, status_code=cause.status_code, detail=cause.detail)
        self.cause = cause


class StructuredOutputError(ProviderError):
    """The model's structured output did not validate, even after a repair attempt."""
