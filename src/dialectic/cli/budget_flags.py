"""``--budget-usd`` and ``--budget-tokens``: checked, then laid over the configuration's ``debate.budget``."""

from __future__ import annotations

import math

from dialectic.core.bounds import check_range
from dialectic.core.config import MAX_BUDGET_TOKENS, MAX_BUDGET_USD, SystemConfig
from dialectic.core.errors import InvalidArgumentsError
from dialectic.engine.api import BudgetChange
from dialectic.engine.budget import with_limits


def checked_budget(usd: float | None, tokens: int | None) -> BudgetChange | None:
    """The limits the flags set, or ``None`` when neither is given; a limit must be positive."""
    if usd is not None and not (math.isfinite(usd) and usd > 0):
        raise InvalidArgumentsError(f"--budget-usd must be a positive amount of US dollars (got {usd:g})")
    if usd is not None and usd > MAX_BUDGET_USD:
        raise InvalidArgumentsError(f"--budget-usd must be at most {MAX_BUDGET_USD:,.0f} US dollars (got {usd:g})")
    if tokens is not None:
        check_range("--budget-tokens", tokens, 1, MAX_BUDGET_TOKENS)
    if usd is None and tokens is None:
        return None
    return BudgetChange(max_cost_usd=usd, max_tokens=tokens)


def with_budget(config: SystemConfig, budget: BudgetChange | None) -> SystemConfig:
    if budget is None:
        return config
    return with_limits(config, budget.max_cost_usd, budget.max_tokens)
