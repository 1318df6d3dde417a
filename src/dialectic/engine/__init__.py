"""The debate engine: a graph of nodes with a persisted cursor."""

from dialectic.engine.api import DebateEngine, DebateRequest

__all__ = ["DebateEngine", "DebateRequest"]
