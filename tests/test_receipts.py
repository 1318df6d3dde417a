"""Receipts: the hash chain over a debate's changes, what a mismatch names, and Ed25519 signatures."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from dialectic.core.changes import (
    Change,
    ContributionRecorded,
    DebateCreated,
    ReceiptRecorded,
    SolutionRecorded,
    StatusChanged,
    VerdictRecorded,
    dump_change,
    fold,
    parse_change,
)
from dialectic.core.domain import Contribution, DebateState, Solution, Verdict
from dialectic.core.errors import ConfigError
from dialectic.core.extras import MissingExtraError
from dialectic.core.receipts import (
    ALGORITHM,
    canonical,
    chained,
    check_signature,
    load_public_key,
    load_signer,
    make_receipt,
    stored_receipt,
    verify_log,
)


def log_of(text: str = "I propose a token bucket.") -> list[Change]:
    return [
        DebateCreated(state=DebateState(id="deb-1", problem="Design a rate limiter")),
        ContributionRecorded(
            round_number=1,
            contribution=Contribution(agent_id="agent-a", agent_role="architect", type="proposal", content=text),
        ),
        ContributionRecorded(
            round_number=1,
            contribution=Contribution(
                agent_id="agent-b", agent_role="security", type="critique", content="Too loose.", target_agent_id="a"
            ),
        ),
        SolutionRecorded(solution=Solution(description="A token bucket per client.")),
        VerdictRecorded(verdict=Verdict(summary="Agreed.")),
        StatusChanged(status="completed"),
    ]


def reparsed(log: list[Change]) -> list[Change]:
    """The log as a store gives it back: each change written and read again."""
    return [parse_change(dump_change(change)) for change in log]


def test_each_link_hashes_the_previous_link_and_the_canonical_change() -> None:
    log = log_of()
    links = chained(log)
    assert len(links) == len(log)
    previous = bytes(32)
    for change, link in zip(log, links, strict=True):
        expected = hashlib.sha256(previous + canonical(change)).digest()
        assert link == expected.hex()
        previous = expected


def test_canonical_json_is_stable_through_the_store_and_sorts_keys() -> None:
    log = log_of()
    assert chained(log) == chained(reparsed(log))
    text = canonical(log[1]).decode()
    assert text.index('"at"') < text.index('"contribution"') < text.index('"kind"')
    assert " " not in text.replace("I propose a token bucket.", "")


def test_a_receipt_of_an_untouched_log_verifies() -> None:
    log = reparsed(log_of())
    receipt = make_receipt("deb-1", log)
    assert receipt.algorithm == ALGORITHM
    assert receipt.count == len(log)
    assert receipt.digest == receipt.links[-1]
    found = verify_log(receipt, log)
    assert found.ok and found.digest == receipt.digest and found.mismatch is None


def test_receipts_in_the_log_are_not_part_of_the_chain() -> None:
    log = reparsed(log_of())
    receipt = make_receipt("deb-1", log)
    saved = [*log, ReceiptRecorded(receipt=receipt)]
    assert stored_receipt(saved) == receipt
    assert verify_log(receipt, reparsed(saved)).ok
    assert fold(saved).receipt == receipt


def test_an_edited_contribution_is_the_first_change_named() -> None:
    log = reparsed(log_of())
    receipt = make_receipt("deb-1", log)
    edited = reparsed(log)
    changed = edited[1]
    assert isinstance(changed, ContributionRecorded)
    changed.contribution.content = "I propose a leaky bucket."
    found = verify_log(receipt, edited)
    assert not found.ok
    assert found.mismatch is not None
    assert (found.mismatch.number, found.mismatch.kind) == (2, "contribution_recorded")
    assert "proposal by agent-a in round 1" in (found.problem or "")


def test_a_missing_change_is_named() -> None:
    log = reparsed(log_of())
    receipt = make_receipt("deb-1", log)
    found = verify_log(receipt, log[:-1])
    assert found.mismatch is not None
    assert found.mismatch.number == len(log) and found.mismatch.kind is None
    assert "missing" in (found.problem or "")


def test_a_forged_digest_fails_even_when_the_links_are_kept() -> None:
    log = reparsed(log_of())
    receipt = make_receipt("deb-1", log)
    forged = receipt.model_copy(update={"digest": "0" * 64})
    assert not verify_log(forged, log).ok


def test_changes_after_the_receipt_are_counted_not_vouched_for() -> None:
    log = reparsed(log_of())
    receipt = make_receipt("deb-1", log[:-1])
    found = verify_log(receipt, log)
    assert found.ok and found.later == 1


def write_keys(directory: Path, name: str) -> tuple[Path, Path]:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    key = Ed25519PrivateKey.generate()
    private = directory / f"{name}.pem"
    public = directory / f"{name}.pub.pem"
    private.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    public.write_bytes(
        key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    return private, public


def test_a_signed_receipt_verifies_with_its_key_and_not_with_another(tmp_path: Path) -> None:
    pytest.importorskip("cryptography")
    private, public = write_keys(tmp_path, "operator")
    _, other = write_keys(tmp_path, "other")
    log = reparsed(log_of())
    receipt = make_receipt("deb-1", log, signer=load_signer(private))
    assert receipt.signature and receipt.public_key
    assert check_signature(receipt.digest, receipt.signature, load_public_key(public))
    assert verify_log(receipt, log, public_key=load_public_key(public)).ok
    wrong = verify_log(receipt, log, public_key=load_public_key(other))
    assert not wrong.ok and "signature does not verify" in (wrong.problem or "")
    unchecked = verify_log(receipt, log)
    assert unchecked.ok and "unchecked" in (unchecked.signature or "")


def test_an_unsigned_receipt_fails_when_a_public_key_is_required(tmp_path: Path) -> None:
    pytest.importorskip("cryptography")
    _, public = write_keys(tmp_path, "operator")
    log = reparsed(log_of())
    found = verify_log(make_receipt("deb-1", log), log, public_key=load_public_key(public))
    assert not found.ok and "not signed" in (found.problem or "")


def test_a_file_that_is_not_a_private_key_is_a_config_error(tmp_path: Path) -> None:
    pytest.importorskip("cryptography")
    junk = tmp_path / "junk.pem"
    junk.write_text("not a key\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="not an unencrypted Ed25519 private key"):
        load_signer(junk)
    with pytest.raises(ConfigError, match="receipt signing key not found: .*absent.pem"):
        load_signer(tmp_path / "absent.pem")


def test_a_key_file_is_read_as_every_named_file_is(tmp_path: Path) -> None:
    """A device, a FIFO or a huge file is refused without being read (it was read whole: ``/dev/zero`` never ends)."""
    pytest.importorskip("cryptography")
    fifo = tmp_path / "key.fifo"
    os.mkfifo(fifo)
    big = tmp_path / "big.pem"
    big.write_bytes(b"x" * (1024 * 1024))
    for load in (load_signer, load_public_key):
        with pytest.raises(ConfigError, match="/dev/zero is a device, not a regular file"):
            load(Path("/dev/zero"))
        with pytest.raises(ConfigError, match="is a FIFO, not a regular file"):
            load(fifo)
        with pytest.raises(ConfigError, match="is larger than 64 KB"):
            load(big)


def test_a_key_of_another_kind_is_a_config_error_not_a_crash(tmp_path: Path) -> None:
    """The private key where the public one belongs, or words the SSH loader takes for an unknown algorithm
    (``UnsupportedAlgorithm``, which is not a ``ValueError``): exit 4 as any file that is not the key."""
    pytest.importorskip("cryptography")
    private, public = write_keys(tmp_path, "operator")
    words = tmp_path / "words.pem"
    words.write_text("not a key at all\n", encoding="utf-8")
    for path in (private, words):
        with pytest.raises(ConfigError, match="is not an Ed25519 public key"):
            load_public_key(path)
    for path in (public, words):
        with pytest.raises(ConfigError, match="is not an unencrypted Ed25519 private key"):
            load_signer(path)


def test_signing_without_cryptography_names_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("dialectic.core.receipts.missing_module", lambda modules: "cryptography")
    with pytest.raises(MissingExtraError, match=r"pip install 'dialectic-debate\[receipts\]'"):
        load_signer(tmp_path / "key.pem")
    with pytest.raises(MissingExtraError):
        load_public_key(tmp_path / "key.pub")
