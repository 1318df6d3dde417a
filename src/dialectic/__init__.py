"""dialectic: multi-agent LLM deliberation — agents propose, critique and refine; a judge synthesizes.

From Python::

    from dialectic import Debate

    result = Debate.from_config("debate-config.json").run_sync("Design a rate limiter")
    print(result.solution)

:class:`Debate` runs (``run``, ``run_sync``), streams (``stream``: typed events, token deltas
included) and resumes debates, and reads the ones saved in the store the CLI uses (``load``,
``list``). The names below are loaded on first use, so the command line, which imports this
package first, starts without loading the engine.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS = {
    "Debate": "dialectic.front.debate",
    "Agent": "dialectic.front.debate",
    "Judge": "dialectic.front.debate",
    "load_config": "dialectic.front.debate",
    "DebateResult": "dialectic.front.results",
    "Finished": "dialectic.front.results",
    "SystemConfig": "dialectic.core.config",
    "AgentConfig": "dialectic.core.config",
    "DebateState": "dialectic.core.domain",
    "HumanTurn": "dialectic.core.domain",
    "TurnChannel": "dialectic.engine.seats",
    "Event": "dialectic.core.events",
    "events": "dialectic.core.events",
    "DialecticError": "dialectic.core.errors",
    "ConfigError": "dialectic.core.errors",
    "ProviderError": "dialectic.core.errors",
    "BudgetExceeded": "dialectic.core.errors",
    "DebateNotFoundError": "dialectic.core.errors",
}
__all__ = [
    "Agent",
    "AgentConfig",
    "BudgetExceeded",
    "ConfigError",
    "Debate",
    "DebateNotFoundError",
    "DebateResult",
    "DebateState",
    "DialecticError",
    "Event",
    "Finished",
    "HumanTurn",
    "Judge",
    "ProviderError",
    "SystemConfig",
    "TurnChannel",
    "__version__",
    "events",
    "load_config",
]

if TYPE_CHECKING:
    from dialectic.core import events
    from dialectic.core.config import AgentConfig, SystemConfig
    from dialectic.core.domain import DebateState, HumanTurn
    from dialectic.core.errors import BudgetExceeded, ConfigError, DebateNotFoundError, DialecticError, ProviderError
    from dialectic.core.events import Event
    from dialectic.engine.seats import TurnChannel
    from dialectic.front.debate import Agent, Debate, Judge, load_config
    from dialectic.front.results import DebateResult, Finished


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'dialectic' has no attribute '{name}'")
    loaded = importlib.import_module(module)
    value = loaded if name == "events" else getattr(loaded, name)
    globals()[name] = value
    return value
