"""The debate's dependency graph, stated once as data: what each piece of work needs before it can start.

:mod:`dialectic.engine.work` schedules by these rules; this module states them declaratively,
so a test can hold the scheduler to them and a benchmark can compute a debate's
critical path — the shortest wall time any scheduler could reach with the latencies the
debate's calls actually had.

Work is named by keys: ``("proposal", r, agent)``, ``("critique", r, critic, target)``,
``("refinement", r, agent)``, ``("summary", r, agent)``, ``("evaluation", r)`` and
``("synthesis",)``.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from dialectic.core.domain import DebateState

Key = tuple[Any, ...]
"""``(kind, round, agent[, target])`` as the saved state and the benchmarks spell it: a plain tuple, its parts
of mixed types (``Any``), so saved keys compare without the engine's own ``WorkKey``."""


def inputs_of(key: Key, agents: Sequence[str], summaries: Collection[Key] = ()) -> list[Key]:
    """The work ``key`` waits for; ``summaries`` are the summary keys that exist (a summary is made only when due)."""
    kind = key[0]
    if kind == "synthesis":
        raise ValueError("the synthesis waits for the last round as a whole: see critical_path")
    number = key[1]

    def history(agent: str) -> list[Key]:
        if number == 1:
            return []
        summary: Key = ("summary", number, agent)
        return [("refinement", number - 1, agent), *([summary] if summary in summaries else [])]

    if kind == "proposal":
        return history(key[2]) if number > 1 else []
    if kind == "summary":
        return [("refinement", number - 1, key[2])]
    if kind == "critique":
        return [("proposal", number, key[3]), *history(key[2])]
    if kind == "refinement":
        critiques: list[Key] = [("critique", number, c, key[2]) for c in agents if c != key[2]]
        return [("proposal", number, key[2]), *critiques, *history(key[2])]
    if kind == "evaluation":
        return [("refinement", number, a) for a in agents]
    raise ValueError(f"unknown work {key!r}")


def call_latencies(state: DebateState) -> dict[Key, float]:
    """Seconds each saved piece of work took, from the debate's own records (carried-over proposals: 0)."""
    latencies: dict[Key, float] = {}
    for rnd in state.rounds:
        for c in rnd.contributions:
            if not c.ok:
                continue
            key: Key = (c.type, rnd.round_number, c.agent_id)
            if c.target_agent_id:
                key = (*key, c.target_agent_id)
            latencies[key] = 0.0 if c.metadata.carried_over else (c.metadata.latency_ms or 0) / 1000
        for agent_id, summary in rnd.summaries.items():
            latencies[("summary", rnd.round_number, agent_id)] = (summary.metadata.latency_ms or 0) / 1000
    return latencies


def critical_path(state: DebateState, extra: Mapping[Key, float] | None = None) -> float:
    """The earliest the debate could finish: the longest chain of saved call latencies through the graph.

    Covers the rounds and the synthesis (with the judge's summary before it, when there was
    one). ``extra`` adds latencies the state does not record (e.g. evaluations).
    """
    latency = {**call_latencies(state), **(extra or {})}
    agents = [a.id for a in state.agents]
    summaries = {k for k in latency if k[0] == "summary"}
    finish: dict[Key, float] = {}

    def done(key: Key) -> float:
        if key not in finish:
            if key not in latency:
                finish[key] = 0.0  # work that was skipped or failed: it held nothing up
            else:
                present = [k for k in inputs_of(key, agents, summaries) if k in latency]
                finish[key] = max((done(k) for k in present), default=0.0) + latency[key]
        return finish[key]

    last = max((r.round_number for r in state.rounds), default=0)
    end = max((done(("refinement", last, a)) for a in agents), default=0.0)
    if state.judge_summary is not None:
        end += (state.judge_summary.metadata.latency_ms or 0) / 1000
    if state.final_solution is not None:
        end += (state.final_solution.metadata.latency_ms or 0) / 1000
    return end
