"""Every view of a debate reads the one ledger: --verbose, the report, show, export and bench's meter agree."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

import pytest

from dialectic.bench.metering import Meter
from dialectic.core.domain import LedgerEntry
from dialectic.core.ledger import ledger_totals, usage_text
from dialectic.testing.fake_server import FakeLLMServer

if TYPE_CHECKING:
    from tests.e2e.conftest import Workspace

pytestmark = pytest.mark.e2e

USAGE = re.compile(
    r"(?P<calls>\d+) calls? .*?· (?P<total>[\d,]+) tokens \((?P<input>[\d,]+) input · (?P<output>[\d,]+) output"
    r"(?: · [\d,]+ cached)?\) · cost (?P<cost>\S+)"
)


def number(text: str) -> int:
    return int(text.replace(",", ""))


def test_verbose_report_show_export_and_bench_give_the_same_figures(
    workspace: Workspace, server: FakeLLMServer
) -> None:
    config = workspace.write_config(
        server, ("architect", "security", "kiss"), rounds=2, assessment="on", verdict="on", personas="auto",
        clarificationsMaxIterations=1,
    )  # fmt: skip
    answers = workspace.root / "answers.json"
    answers.write_text(json.dumps({"q1": "10k users", "q2": "yes", "q3": "no"}), encoding="utf-8")
    result = workspace.run(
        "debate", "Design a rate limiter", "-c", str(config), "--clarify", "--answers", str(answers),
        "--verbose", "--report", "report.md", "--output", "out.json",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    (debate_id,) = workspace.debate_ids()

    exported = workspace.export(debate_id)
    entries = [LedgerEntry.model_validate(e) for e in exported["ledger"]]
    totals = exported["totals"]
    assert {e.kind for e in entries} >= {"clarification", "personas", "proposal", "critique", "refinement"}
    assert {e.kind for e in entries} >= {"assessment", "synthesis", "verdict"}
    assert totals == ledger_totals(entries).to_json_dict()
    assert totals["costUsd"] is not None and totals["costUsd"] > 0  # gpt-4o-mini has a price
    assert json.loads((workspace.root / "out.json").read_text(encoding="utf-8"))["totals"] == totals
    line = usage_text(ledger_totals(entries))

    verbose = next(x for x in result.stderr.splitlines() if x.startswith("Usage: "))
    assert verbose == f"Usage: {line}"

    shown = workspace.run("show", debate_id)
    assert f"Usage    {line}" in shown.stdout.splitlines()

    report = (workspace.root / "report.md").read_text(encoding="utf-8")
    assert f"- **Calls:** {totals['calls']}" in report
    tokens = f"{totals['inputTokens']:,} input · {totals['outputTokens']:,} output · {totals['totalTokens']:,} total"
    assert f"- **Tokens:** {tokens}" in report
    figures = USAGE.search(line)
    assert figures is not None
    assert f"- **Cost:** {figures['cost']}" in report
    assert number(figures["calls"]) == totals["calls"] and number(figures["total"]) == totals["totalTokens"]

    meter = Meter()
    meter.add_ledger(entries)
    assert (meter.calls, meter.input_tokens, meter.output_tokens) == (
        totals["requests"],
        totals["inputTokens"],
        totals["outputTokens"],
    )
    answered = [p for p in server.paths() if p in ("/v1/responses", "/v1/chat/completions")]
    assert meter.calls == len(answered)  # the ledger counted every request the server answered
