"""The live display's bookkeeping: counts per round that never run ahead of the store, and the time left."""

from __future__ import annotations

from dialectic.cli.work_board import WorkBoard, duration
from dialectic.core import events as ev
from dialectic.core.domain import Contribution, DebateRound, DebateState, Participant

DEBATE = "deb-20250101-000000-ABCD"
AGENTS = tuple(
    Participant(id=f"a{i}", name=f"Agent {i}", role="architect", model="m", provider="openai") for i in (1, 2, 3)
)
JUDGE = Participant(id="j", name="Judge", role="generalist", model="m", provider="openai")


def started() -> WorkBoard:
    board = WorkBoard()
    board.track(ev.DebateStarted(DEBATE, "p", 2, AGENTS, JUDGE))
    return board


def saved(board: WorkBoard, number: int, kind: str, agent: str = "a1", target: str | None = None) -> None:
    c = Contribution(agent_id=agent, agent_role="architect", type=kind, content="x", target_agent_id=target)  # type: ignore[arg-type]
    board.track(ev.ContributionAdded(DEBATE, number, "Agent", c))


def call(board: WorkBoard, number: int, kind: str, agent: str = "a1", target: str | None = None) -> ev.AgentStarted:
    event = ev.AgentStarted(DEBATE, agent, "Agent", kind, number, kind, target)
    board.track(event)
    return event


def test_rounds_overlap_and_each_shows_saved_against_expected_with_what_runs() -> None:
    board = started()
    for agent in ("a1", "a2", "a3"):
        saved(board, 1, "proposal", agent)
    call(board, 1, "critique", "a2", "a1")
    call(board, 2, "critique", "a3", "a1")
    saved(board, 1, "refinement", "a1")
    assert board.round_line(1) == "Round 1/2  proposals 3/3 · critiques 0/6 (1 running) · refinements 1/3"
    assert board.round_line(2) == "Round 2/2  proposals 0/3 · critiques 0/6 (1 running) · refinements 0/3"
    assert board.rounds_with_work() == [1, 2]


def test_a_finished_call_stops_running_and_its_save_is_counted_once() -> None:
    board = started()
    started_event = call(board, 1, "proposal")
    board.track(ev.AgentCompleted(DEBATE, "a1", "Agent", "proposal", True, 1, "proposal", None))
    saved(board, 1, "proposal")
    assert board.round_line(1) == "Round 1/2  proposals 1/3 · critiques 0/6 · refinements 0/3"
    assert started_event.round_number == 1 and board.calls_done == 1


def test_a_dropped_agent_lowers_what_is_expected() -> None:
    board = started()
    from dialectic.core.domain import DroppedParticipant

    board.track(
        ev.ParticipantRemoved(DEBATE, "Agent 3", DroppedParticipant(agent_id="a3", round_number=1, reason="down"), 2)
    )
    saved(board, 1, "proposal")
    assert board.round_line(1) == "Round 1/2  proposals 1/2 · critiques 0/2 · refinements 0/2"


def test_a_resumed_debate_counts_what_was_saved_before() -> None:
    state = DebateState(id=DEBATE, problem="p", agents=list(AGENTS), judge=JUDGE)
    rnd = DebateRound(round_number=1)
    rnd.contributions = [
        Contribution(agent_id=a.id, agent_role="architect", type="proposal", content="x") for a in AGENTS
    ]
    state.rounds = [rnd]
    board = WorkBoard()
    board.preload(state)
    board.track(ev.DebateStarted(DEBATE, "p", 2, AGENTS, JUDGE, resumed=True))
    assert board.round_line(1) == "Round 1/2  proposals 3/3 · critiques 0/6 · refinements 0/3"
    assert board.calls_before == 3


def test_the_estimate_comes_from_this_runs_rate() -> None:
    board = started()
    assert board.estimate_left(10.0) is None  # no rate yet
    for agent in ("a1", "a2"):
        call(board, 1, "proposal", agent)
        board.track(ev.AgentCompleted(DEBATE, agent, "Agent", "proposal", True, 1, "proposal", None))
    # 3 proposals + 2 rounds × (6 critiques + 3 refinements) + 1 synthesis = 22 calls; 2 done in 10 s
    assert board.calls_expected() == 22
    assert board.estimate_left(10.0) == 100.0


def test_durations_read_naturally() -> None:
    assert [duration(s) for s in (0.2, 44.6, 61, 3599, 3660)] == ["1 s", "45 s", "1 min", "1 h 00 min", "1 h 01 min"]


def test_a_council_round_counts_rankings_and_a_correction_round_one_check_each() -> None:
    council = WorkBoard()
    council.track(ev.DebateStarted(DEBATE, "p", 1, AGENTS, JUDGE, format="council"))
    for agent in ("a1", "a2", "a3"):
        saved(council, 1, "proposal", agent)
    call(council, 1, "ranking", "a2")
    assert council.round_line(1) == "Round 1/1  proposals 3/3 · rankings 0/3 (1 running)"
    assert council.calls_expected() == 7  # 2N + 1
    correction = WorkBoard()
    correction.track(ev.DebateStarted(DEBATE, "p", 1, AGENTS, JUDGE, format="correction"))
    saved(correction, 1, "critique", "a1", "a2")
    saved(correction, 1, "refinement", "a2")
    assert correction.round_line(1) == "Round 1/1  proposals 0/3 · critiques 1/3 · refinements 1/1"
