"""What the scripted model writes in a design debate: a small debate that reads like one.

A newcomer's first run is often on the scripted provider: it should show what a debate looks like.
So each role proposes three concrete components from its own angle, a critique names a component of
the proposal it reads and says what is missing, a refinement keeps its components and takes up the
fix it was given, and the judge's solution lists the components the debate settled on, with
trade-offs, recommendations and open questions. Everything is a pure function of the prompt (the
problem, the proposal or critiques quoted in it), so runs repeat exactly.
"""

from __future__ import annotations

import re

from dialectic.core.json_values import JsonObject

Component = tuple[str, str, str]
"""A component's name, what it does, and the fix a critic asks of it."""

COMPONENTS: dict[str, tuple[Component, ...]] = {
    "architect": (
        (
            "Stateless service tier behind a load balancer",
            "scales out by adding instances; no node keeps session state",
            "health checks that take a failing instance out of rotation within 10 s",
        ),
        (
            "Postgres as the system of record",
            "one transactional store keeps every write consistent",
            "a standby replica with automatic failover",
        ),
        (
            "Queue between intake and processing",
            "absorbs bursts and lets workers retry a failed job",
            "a dead-letter queue for jobs that fail three times",
        ),
    ),
    "performance": (
        (
            "Redis cache in front of the database",
            "serves hot reads in under a millisecond; entries expire after 60 s",
            "request coalescing so an expired key does not send a stampede to the database",
        ),
        (
            "Write batching every 50 ms",
            "groups writes to cut round trips to the store",
            "a flush on shutdown so a batch in memory is never lost",
        ),
        (
            "Latency budget per endpoint",
            "each call has a p99 budget, checked by a load test at twice the peak",
            "an alert when the p99 passes its budget for five minutes",
        ),
    ),
    "kiss": (
        (
            "Single deployable service",
            "one process to build, deploy and debug until a measurement shows a need to split",
            "module boundaries inside it, so a later split is a move, not a rewrite",
        ),
        (
            "Managed database",
            "backups, failover and upgrades are the provider's job",
            "a tested restore from backup, not only the backups",
        ),
        (
            "Plain HTTP and JSON interfaces",
            "standard tools work on every call; no custom protocol",
            "versioned paths, so a change does not break old clients",
        ),
    ),
    "security": (
        (
            "Short-lived access tokens",
            "every request carries a token checked at the edge; tokens expire after 15 min",
            "revocation of a token before it expires",
        ),
        (
            "Token bucket per API key",
            "limits each client's rate, so one client cannot starve the others",
            "a 429 answer with Retry-After, so clients back off",
        ),
        (
            "Append-only audit log",
            "every change is recorded with who made it and when",
            "a retention period and access to the log limited to auditors",
        ),
    ),
    "testing": (
        (
            "Contract tests between components",
            "each interface is checked against what its callers expect",
            "the contract tests run on every change, before the merge",
        ),
        (
            "Load test in CI",
            "a scripted load at twice the expected peak runs before each release",
            "a stored baseline, so a slower release fails the build",
        ),
        (
            "Fault injection in staging",
            "drops connections and slows the store to prove the retries work",
            "a runbook for each fault the injection finds",
        ),
    ),
    "datamodeling": (
        (
            "Normalized core tables",
            "each fact is stored once, with foreign keys between tables",
            "an index for every foreign key used in a join",
        ),
        (
            "Explicit schema migrations",
            "every schema change is a reviewed, reversible migration",
            "a migration test against a copy of production data",
        ),
        (
            "Event table for history",
            "changes are appended as events, so history can be rebuilt",
            "a compaction job so the table does not grow without bound",
        ),
    ),
}
"""Each role's components (another role, or none, gets the architect's)."""
ROLE_NAMES = {
    "architect": "System Architect",
    "performance": "Performance Engineer",
    "kiss": "Simplicity Advocate",
    "security": "Security Specialist",
    "testing": "Testing Specialist",
    "datamodeling": "Data Modeling Specialist",
}
REVISED = "(from the critiques)"
"""How a revised point says so."""
_BOLD = re.compile(r"\*\*([^*\n]{3,80})\*\*")
_FIXES = {fix_name: fix for components in COMPONENTS.values() for fix_name, _, fix in components}


def _components(role: str) -> tuple[Component, ...]:
    return COMPONENTS.get(role, COMPONENTS["architect"])


def quoted(prompt: str, label: str) -> str:
    """The text quoted (between triple quotes) after the line that starts with ``label``; ``""`` if none."""
    found = re.search(re.escape(label) + r"[^\n]*:\n\"\"\"\n(.*?)\n\"\"\"", prompt, re.DOTALL)
    return found.group(1).strip() if found else ""


ANGLES = {
    "architect": "does not say what happens when it fails",
    "performance": "has no figure for its behaviour at peak load",
    "kiss": "adds a moving part without saying when it pays off",
    "security": "does not say who may call it or how abuse is stopped",
    "testing": "has no test that shows it works under failure",
    "datamodeling": "does not say how its data is kept consistent",
}
"""What each role looks for first in a proposal it critiques."""


def proposal(role: str, prompt: str) -> str:
    """Three numbered points, each a component in bold and what it does."""
    return "\n".join(f"{n}. **{name}**: {does}." for n, (name, does, _) in enumerate(_components(role), 1))


def critique(role: str, prompt: str) -> str:
    """Two points on the proposal quoted in the prompt, each naming one of its components, what is missing
    (from the critic's angle) and the fix: the points not yet revised first, so later rounds move on."""
    quoted_proposal = quoted(prompt, "The proposal by")
    names = _BOLD.findall(quoted_proposal) or [name for name, _, _ in _components("architect")]
    revised = set(_BOLD.findall("\n".join(ln for ln in quoted_proposal.splitlines() if REVISED in ln)))
    start = sum(map(ord, role)) % len(names)  # critics of one proposal start from different points
    ordered = [names[(start + k) % len(names)] for k in range(len(names))]
    chosen = ([n for n in ordered if n not in revised] + [n for n in ordered if n in revised])[:2]
    angle = ANGLES.get(role, ANGLES["architect"])
    lines = []
    for n, name in enumerate(chosen, 1):
        fix = _FIXES.get(name, "a stated limit and what happens past it")
        lines.append(f"{n}. **{name}** {angle}: add {fix}.")
    return "\n".join(lines)


def judge_summary(prompt: str) -> str | None:
    """The judge's notes on the debate: the components proposed, once each; ``None`` when it names none."""
    named = list(dict.fromkeys(_BOLD.findall(prompt)))
    if not named:
        return None
    return "The debate proposed: " + "; ".join(f"**{name}**" for name in named) + "."


def refinement(role: str, prompt: str) -> str:
    """The role's proposal again, each point taking up the fix a critique asked of it (now or before)."""
    asked = set(_BOLD.findall("\n".join(re.findall(r'by [^\n]*\):\n"""\n(.*?)\n"""', prompt, re.DOTALL))))
    own = quoted(prompt, "Your proposal")
    asked |= set(_BOLD.findall("\n".join(ln for ln in own.splitlines() if REVISED in ln)))
    points = []
    for n, (name, does, fix) in enumerate(_components(role), 1):
        point = f"{n}. **{name}**: {does}"
        points.append(point + (f", with {fix} {REVISED}." if name in asked else "."))
    return "\n".join(points)


def solution_fields(schema_name: str, prompt: str) -> JsonObject:
    """The judge's structured solution, from the components the debate named (nothing for another schema):
    the fields a solution's schema may have, to be kept where the schema asked for them."""
    if "synthesis" not in schema_name.lower():
        return {}
    named = list(dict.fromkeys(_BOLD.findall(prompt)))[:5] or [name for name, _, _ in _components("architect")]
    does = {name: what for components in COMPONENTS.values() for name, what, _ in components}
    points = [f"{n}. **{name}**: {does.get(name, 'as the debate proposed it')}." for n, name in enumerate(named, 1)]
    return {
        "description": "\n".join(points),
        "implementation": "Build the components in the order listed, each behind its own interface, and load-test "
        "the whole at twice the expected peak before launch.",
        "unfulfilled_major_requirements": [],
        "open_questions": ["What peak load must the system handle, and how fast is it expected to grow?"],
        "tradeoffs": [f"**{named[0]}** adds a component to run and monitor, in exchange for the guarantees it gives."],
        "recommendations": ["Start with the first two components; add the others when measurements call for them."],
        "unfulfilledMajorRequirements": [],
        "openQuestions": ["What peak load must the system handle, and how fast is it expected to grow?"],
    }
