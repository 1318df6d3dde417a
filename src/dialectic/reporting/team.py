"""The report's section for a team picked from a pool (``debate.team``): who was picked, who was not, and why.

Pure rendering of the saved :class:`~dialectic.core.domain.TeamChoice`; the scoring is
:mod:`dialectic.engine.team`'s (see ``docs/team.md``).
"""

from __future__ import annotations

from dialectic.core.domain import TeamChoice, TeamMember


def _flat(text: str) -> str:
    """``text`` on one line, so it fits in a list item (a leading ``#`` or ``>`` escaped)."""
    flat = " ".join(text.split())
    return "\\" + flat if flat.startswith(("#", ">")) else flat


def member_line(member: TeamMember) -> str:
    """One agent and its reasons: ``- **Name** (`id`, provider/model, role): score 1240; rating …``."""
    who = f"**{_flat(member.name)}** (`{member.agent_id}`, {_flat(member.model)}, {_flat(member.role)})"
    return f"- {who}: {'; '.join(_flat(reason) for reason in member.reasons)}"


def team_blocks(choice: TeamChoice | None) -> list[str]:
    """The ``## Team`` section; nothing when the agents were configured rather than picked."""
    if choice is None:
        return []
    pool = len(choice.members) + len(choice.passed_over)
    blocks = [
        "## Team",
        f"Picked {len(choice.members)} of the {pool} agents of the pool `{_flat(choice.pool)}` by ELO rating "
        f"(less its uncertainty), calibration (Brier score of stated confidences) and diversity of models and "
        f"roles, from {choice.debates} completed debate(s) in the store. In the order picked:",
        "\n".join(member_line(member) for member in choice.members),
    ]
    if choice.passed_over:
        blocks += ["Not picked:", "\n".join(member_line(member) for member in choice.passed_over)]
    return blocks
