"""The council's and the correction-biased critique's rules, and the adaptive protocol's other stop rules."""

from __future__ import annotations

import pytest

from dialectic.engine.adaptive import AdaptivePlan, leader_more_likely, sampling_done
from dialectic.engine.correction import Trajectory, decide, read_critique
from dialectic.engine.council import CouncilPlan, borda, chairman_choice, read_ranking, shown_to


def test_each_ranker_sees_every_answer_in_its_own_order_its_own_last() -> None:
    texts = ["a0", "a1", "a2"]
    assert [(s.label, s.member) for s in shown_to(0, texts)] == [("A", 1), ("B", 2), ("C", 0)]
    assert [s.member for s in shown_to(2, texts)] == [0, 1, 2]
    assert [s.member for s in shown_to(1, ["a0", None, "a2"])] == [2, 0]  # a missing answer is not shown


def test_a_ranking_is_read_after_its_last_header_each_member_once() -> None:
    shown = shown_to(0, ["x", "y", "z"])  # A=1, B=2, C=0
    reply = "Response A is wrong. Response C holds.\nFINAL RANKING:\n1. Response C\n2. Response A\n3. Response C\n"
    assert read_ranking(reply, shown) == [0, 1]
    assert read_ranking("I like Response B best, then Response A.", shown) == [2, 1]
    assert read_ranking("FINAL RANKING:\n1. Response X", shown) == []  # a copied placeholder ranks nothing


def test_borda_points_and_the_chairmans_choice() -> None:
    standings = borda([[0, 1, 2], [0, 2, 1], [1, 0]], members=[0, 1, 2])
    assert [(s.member, s.points) for s in standings] == [(0, 4), (1, 2), (2, 1)]
    assert chairman_choice(standings, CouncilPlan(members=3, top=2)) == [0, 1]
    assert [s.member for s in borda([], members=[0, 1])] == [0, 1]  # no rankings: members' order
    with pytest.raises(ValueError):
        CouncilPlan(members=1)


ANSWER = 'Colour 0 red, 1 red.\n<answer>{"0": 1, "1": 1}</answer>'


def test_a_critique_corrects_only_with_a_violation_and_evidence_the_answer_holds() -> None:
    good = read_critique(
        'Vertices 0 and 1 share an edge.\nViolation: adjacent vertices share a colour\nEvidence: "1": 1', ANSWER
    )
    assert good.corrects and good.violation == "adjacent vertices share a colour"
    invented = read_critique("Violation: vertex 3 is blue\nEvidence: 3 is blue", ANSWER)
    assert not invented.corrects  # the quote is not in the answer
    no_quote = read_critique("Violation: colours clash", ANSWER)
    assert not no_quote.corrects and no_quote.evidence is None
    assert not read_critique("Everything checks out.", ANSWER).corrects
    assert not read_critique("Violation: none\nEvidence: red", ANSWER).corrects


def test_the_trajectory_decides_not_the_majority() -> None:
    holds = read_critique("All good.", "x")
    corrected = read_critique("Violation: wrong sum\nEvidence: 4 = 7", "3 + 4 = 7")
    assert corrected.corrects
    paths = [
        Trajectory("7", critique=corrected, revised="8"),  # shown wrong, revised
        Trajectory("7", critique=corrected, revised="7"),  # shown wrong, kept
        Trajectory("9", critique=holds),  # checked, nothing found
    ]
    decision = decide(paths)
    # 7: 1 - 1 + 1 - 1 + 0.5 = 0.5; 8: 1; 9: 1 + 0.5 = 1.5
    assert decision.points == {"7": 0.5, "8": 1.0, "9": 1.5}
    assert decision.winner == "9"


def test_ties_go_to_the_surer_answer_then_the_earliest() -> None:
    assert decide([Trajectory("a", confidence=0.2), Trajectory("b", confidence=0.9)]).winner == "b"
    assert decide([Trajectory("a"), Trajectory("b")]).winner == "a"
    assert decide([Trajectory(None)]).winner is None


def test_the_beta_rule_stops_once_the_leader_is_likely_enough() -> None:
    assert leader_more_likely(2, 0) == 0.875 and leader_more_likely(4, 0) == 0.96875
    plan = AdaptivePlan(most=16, rule="beta")
    assert not sampling_done(["1", "1", "1"], plan)
    assert sampling_done(["1"] * 4, plan)
    assert not sampling_done(["1", "2", "1", "1", "1", "1"], plan)  # 5 to 1: 0.94
    assert sampling_done(["1", "2", "1", "1", "1", "1", "1"], plan)  # 6 to 1: 0.96


def test_the_esc_rule_stops_after_a_window_that_agrees() -> None:
    plan = AdaptivePlan(most=16, rule="esc", window=2)
    assert sampling_done(["3", "3"], plan)
    assert not sampling_done(["3", "4"], plan)
    assert not sampling_done(["3", "4", "5"], plan)  # the window is not full yet
    assert sampling_done(["3", "4", "5", "5"], plan)
    assert not sampling_done([None, None], plan)
    with pytest.raises(ValueError):
        AdaptivePlan(rule="coin")  # type: ignore[arg-type]
