"""What a replay of a stored debate runs: its problem, its configuration (or another), reading the call cache.

``dialectic replay`` starts a new debate from the request built here. The configuration is the one
the debate saved (or the file given), with the judge overrides laid over it and ``debate.cache``
set to ``read``, so every request whose inputs did not change is answered from the call cache. The
new debate keeps the original's shuffle seed (:meth:`~dialectic.core.domain.DebateState.shuffle_seed`):
the judge sees the participants under the same labels, in the same order, so its requests repeat too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from dialectic.core.config import with_cache
from dialectic.core.domain import DebateState
from dialectic.core.errors import DebateStateError
from dialectic.engine.api import DebateRequest
from dialectic.loading.config import with_judge
from dialectic.loading.setup import Overrides, prepare_config


@dataclass(frozen=True)
class Replay:
    request: DebateRequest
    warnings: list[str] = field(default_factory=list)
    """What the user should know about the configuration file given (unknown keys…)."""


def replay_request(
    original: DebateState,
    config_path: Path | None = None,
    *,
    judge_provider: str | None = None,
    judge_model: str | None = None,
    lenient: bool = False,
) -> Replay:
    """The new debate that replays ``original``: with ``config_path``'s configuration, else the saved one;
    ``DebateStateError`` when there is neither (a debate saved before configurations were kept)."""
    warnings: list[str] = []
    pasted: str | None = None
    if config_path is not None:
        prepared = prepare_config(config_path, Overrides(lenient=lenient), check=False)
        config, directory, warnings = prepared.config, prepared.directory, list(prepared.warnings)
    elif original.config:
        config, directory = original.config_or_defaults(), original.config_dir()
        pasted = original.context  # the files as the original read them, so its prompts repeat
    else:
        raise DebateStateError(f"debate {original.id} has no saved configuration to replay; give one with -c")
    config = with_cache(with_judge(config, provider=judge_provider, model=judge_model), "read")
    request = DebateRequest(
        problem=original.problem,
        config=config,
        config_dir=directory,
        pasted_files=pasted,
        replay_of=original.id,
        seed=original.shuffle_seed(),
    )
    return Replay(request=request, warnings=warnings)
