"""The LLM port: one provider protocol, its adapters, and the wrappers that make calls reliable."""

from dialectic.llm.base import (
    FINISH_LENGTH,
    FINISH_STOP,
    Completion,
    CompletionRequest,
    Delta,
    JsonSchema,
    LLMProvider,
    Message,
)

__all__ = [
    "FINISH_LENGTH",
    "FINISH_STOP",
    "Completion",
    "CompletionRequest",
    "Delta",
    "JsonSchema",
    "LLMProvider",
    "Message",
]
