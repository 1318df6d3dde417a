"""The engine saves a completed debate's receipt in the append that completes it, on every store."""

from __future__ import annotations

from collections.abc import Callable

from dialectic.core.changes import ReceiptRecorded, StatusChanged
from dialectic.core.receipts import covered, stored_receipt, verify_log
from dialectic.testing.harness import Harness, make_config


def test_a_completed_debate_carries_a_receipt_of_its_whole_log(harness: Callable[..., Harness]) -> None:
    h = harness()
    state = h.start(make_config(agents=2, rounds=2, verdict="on"))
    log = h.store.changes(state.id)
    assert isinstance(log[-1], ReceiptRecorded)
    receipt = stored_receipt(log)
    assert receipt is not None and state.receipt == receipt == h.store.load(state.id).receipt
    assert receipt.count == len(covered(log)) == len(log) - 1
    assert any(isinstance(c, StatusChanged) and c.status == "completed" for c in covered(log))
    assert {"debate_created", "contribution_recorded", "solution_recorded", "verdict_recorded"} <= {
        c.kind for c in covered(log)
    }
    assert verify_log(receipt, log).ok


def test_a_debate_that_does_not_complete_has_no_receipt(harness: Callable[..., Harness]) -> None:
    h = harness()
    state = h.start(make_config(agents=2, rounds=1), clarify=True)
    assert state.status == "suspended"
    assert state.receipt is None and stored_receipt(h.store.changes(state.id)) is None
    done = state
    for _ in range(5):
        if done.status != "suspended":
            break
        done = h.resume(state.id, {item.id: "yes" for item in done.pending_questions()})
    assert done.status == "completed" and done.receipt is not None
    assert verify_log(done.receipt, h.store.changes(state.id)).ok
