"""``benchmarks/adaptive_replay.py``: recorded adaptive items decided again under today's rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from dialectic.bench.records import ItemResult, Reply
from dialectic.engine.adaptive import AdaptivePlan

from .conftest import benchmark_script

ROOT = Path(__file__).parents[2]
COMMITTED = ROOT / "benchmarks" / "results" / "boolean-logic-0.5b-gpu.json"
replay_script = benchmark_script("adaptive_replay")


def reply(who: str, answer: str) -> Reply:
    return Reply(who=who, text=f"Working... \\boxed{{{answer}}}", answer=answer, method="boxed")


def recorded(samples: list[str], reviews: list[str], truth: str) -> ItemResult:
    """An adaptive item as the old rule recorded it: an exchange on every split."""
    rounds = [[reply(f"sample-{k + 1}", a) for k, a in enumerate(samples)]]
    if reviews:
        rounds.append([reply(f"reviewer-{k + 1}", a) for k, a in enumerate(reviews)])
    return ItemResult(
        arm="adaptive",
        item_id="x-0001",
        index=1,
        question="What is 2+3?",
        truth=truth,
        match="numeric",
        stages=["samples", "exchange"][: len(rounds)],
        rounds=rounds,
        final="6",
        outcome="correct" if truth == "6" else "wrong",
        calls=len(samples) + len(reviews),
        input_tokens=1000,
        output_tokens=500,
        wall_s=1.0,
    )


def test_an_exchange_over_scattered_answers_is_dropped_and_the_first_round_decides() -> None:
    old = recorded(["5", "6", "7", "8", "5"], ["6", "6", "6"], truth="5")
    new = replay_script.replay(old, AdaptivePlan(), "adaptive · replayed")
    assert new.stages == ["samples"] and len(new.rounds) == 1
    assert new.final == "5" and new.correct and not old.correct
    assert new.calls == 5 and new.votes == {"5": 2, "6": 1, "7": 1, "8": 1}
    assert new.input_tokens < old.input_tokens and new.output_tokens < old.output_tokens


def test_a_contested_exchange_is_kept_and_every_answer_still_votes() -> None:
    old = recorded(["5", "6", "7", "6", "5"], ["6", "6", "5"], truth="6")
    new = replay_script.replay(old, AdaptivePlan(), "adaptive · replayed")
    assert new.stages == ["samples", "exchange"] and new.calls == 8
    assert new.final == "6" and new.votes == {"5": 3, "6": 4, "7": 1}
    assert (new.input_tokens, new.output_tokens) == (old.input_tokens, old.output_tokens)


def test_a_sample_agreeing_with_the_greedy_answer_ends_the_replayed_sampling() -> None:
    old = recorded(["5", "5", "6", "5"], [], truth="5")
    new = replay_script.replay(old, AdaptivePlan(), "adaptive · replayed", prompt_tokens=100)
    assert [r.answer for r in new.rounds[0]] == ["5", "5"] and new.calls == 2
    assert new.final == "5" and new.votes == {"5": 2}
    assert new.input_tokens == old.input_tokens - 2 * 100


def test_a_recording_the_rules_cannot_be_replayed_on_is_refused() -> None:
    short = recorded(["5", "6"], [], truth="5")
    with pytest.raises(ValueError, match="more answers"):
        replay_script.replay(short, AdaptivePlan(), "adaptive · replayed")
    missing = recorded(["5", "6", "7", "6", "5"], [], truth="5")
    with pytest.raises(ValueError, match="does not have"):
        replay_script.replay(missing, AdaptivePlan(), "adaptive · replayed")


def test_a_committed_file_gets_its_replayed_arm_beside_the_recorded_ones(capsys: pytest.CaptureFixture[str]) -> None:
    assert replay_script.main([str(COMMITTED)]) == 0
    out = capsys.readouterr().out
    rows = [line.split(" | ")[0] for line in out.splitlines() if line.startswith("| ") and "pp" in line]
    assert rows == ["| single", "| self-consistency:7", "| adaptive", "| adaptive · replayed"]
    assert "Answers drawn: 398 recorded, 313 kept. Exchanges recorded 2 of 100 items; kept (contested) 0" in out


def test_bad_input_gets_one_line(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="adaptive_replay: .*"):
        replay_script.main([str(tmp_path / "missing.json")])
    with pytest.raises(SystemExit, match="contest is at least 1"):
        replay_script.main([str(COMMITTED), "--contest", "0"])
