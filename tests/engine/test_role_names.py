"""An agent is addressed in its prompts by its configured name, not the built-in title of its role."""

from __future__ import annotations

from collections.abc import Callable

from dialectic.core.config import SystemConfig
from dialectic.testing.harness import Harness


def test_a_configured_name_is_the_one_the_prompts_use(harness: Callable[..., Harness]) -> None:
    config = SystemConfig.model_validate(
        {
            "agents": [
                {"id": "a1", "name": "Security Engineer", "role": "security", "provider": "scripted", "model": "m"},
                {"id": "a2", "name": "System Architect", "role": "architect", "provider": "scripted", "model": "m"},
            ],
            "judge": {"id": "judge", "name": "Judge", "role": "generalist", "provider": "scripted", "model": "m"},
            "debate": {"rounds": 1},
        }
    )
    h = harness()
    h.start(config)
    prompts = {c.tag: c.last_user for c in h.provider.calls}
    assert prompts["proposal:security"].startswith("You are the Security Engineer in a design debate.")
    assert "Security Specialist" not in "".join(c.last_user + c.messages[0].content for c in h.provider.calls)
