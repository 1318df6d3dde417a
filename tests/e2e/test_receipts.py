"""Receipts through the installed command: saved when a debate completes, checked by ``dialectic verify``."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from dialectic.core.changes import DebateCreated
from dialectic.core.domain import DebateState
from dialectic.store import open_store
from dialectic.testing.fake_server import FakeLLMServer
from tests.e2e.test_debate_flow import saved_id

if TYPE_CHECKING:
    from tests.e2e.conftest import Workspace

pytestmark = pytest.mark.e2e


def run_debate(workspace: Workspace, server: FakeLLMServer, *flags: str, env: dict[str, str] | None = None) -> str:
    config = workspace.write_config(server)
    result = workspace.run("debate", "Design a rate limiter", "-c", str(config), *flags, env=env)
    assert result.returncode == 0, result.stderr
    return saved_id(result.stderr)


def write_keys(directory: Path, name: str) -> tuple[Path, Path]:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    key = Ed25519PrivateKey.generate()
    private, public = directory / f"{name}.pem", directory / f"{name}.pub"
    private.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    public.write_bytes(
        key.public_key().public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
    )
    return private, public


def test_verify_passes_untouched_and_names_the_contribution_edited_by_hand(
    workspace: Workspace, server: FakeLLMServer
) -> None:
    debate_id = run_debate(workspace, server)
    exported = workspace.export(debate_id)
    receipt = exported["receipt"]
    assert receipt["debateId"] == debate_id and receipt["algorithm"] == "sha256-chain"

    verified = workspace.run("verify", debate_id)
    assert verified.returncode == 0, verified.stderr
    assert verified.stdout.strip() == f"verified: {receipt['count']} changes, digest sha256-chain:{receipt['digest']}"

    report = workspace.run("report", debate_id)
    assert report.returncode == 0, report.stderr
    assert receipt["digest"] in report.stdout
    shown = workspace.run("show", debate_id)
    assert f"Receipt  sha256-chain:{receipt['digest']} ({receipt['count']} changes)" in shown.stdout

    database = workspace.home / "debates.sqlite3"
    with sqlite3.connect(database) as db:
        seq, payload = db.execute(
            "SELECT seq, payload FROM changes WHERE debate_id = ? AND kind = 'contribution_recorded' "
            "ORDER BY seq LIMIT 1 OFFSET 1",
            (debate_id,),
        ).fetchone()
        change = json.loads(payload)
        change["contribution"]["content"] += " (edited)"
        db.execute(
            "UPDATE changes SET payload = ? WHERE debate_id = ? AND seq = ?", (json.dumps(change), debate_id, seq)
        )
    contribution = change["contribution"]

    tampered = workspace.run("verify", debate_id)
    assert tampered.returncode == 1, tampered.stderr
    assert tampered.stdout == ""
    message = tampered.stderr.strip()
    assert len(message.splitlines()) == 1
    assert f"change #{seq} (contribution_recorded" in message
    assert f"{contribution['type']}" in message and contribution["agentId"] in message


def test_a_signed_receipt_fails_with_the_wrong_public_key(workspace: Workspace, server: FakeLLMServer) -> None:
    pytest.importorskip("cryptography")
    private, public = write_keys(workspace.root, "operator")
    _, other = write_keys(workspace.root, "other")
    debate_id = run_debate(workspace, server, "--sign-key", str(private))
    receipt = workspace.export(debate_id)["receipt"]
    assert receipt["signature"] and receipt["publicKey"]

    right = workspace.run("verify", debate_id, "--public-key", str(public))
    assert right.returncode == 0, right.stderr
    assert right.stdout.startswith(f"verified: {receipt['count']} changes") and "signature verified" in right.stdout

    wrong = workspace.run("verify", debate_id, "--public-key", str(other))
    assert wrong.returncode == 1
    assert "signature does not verify with the public key given" in wrong.stderr


def test_a_receipt_file_is_checked_against_the_store(workspace: Workspace, server: FakeLLMServer) -> None:
    pytest.importorskip("cryptography")
    private, public = write_keys(workspace.root, "operator")
    debate_id = run_debate(workspace, server, env={"DIALECTIC_RECEIPT_KEY": str(private)})
    exported = workspace.export(debate_id)
    receipt_file = workspace.root / "receipt.json"
    receipt_file.write_text(json.dumps(exported["receipt"]), encoding="utf-8")
    export_file = workspace.root / "export.json"
    export_file.write_text(json.dumps(exported), encoding="utf-8")

    for target in (receipt_file, export_file):
        result = workspace.run("verify", str(target), "--public-key", str(public))
        assert result.returncode == 0, result.stderr
        assert exported["receipt"]["digest"] in result.stdout

    forged = dict(exported["receipt"], digest="0" * 64)
    receipt_file.write_text(json.dumps(forged), encoding="utf-8")
    assert workspace.run("verify", str(receipt_file)).returncode == 1


def test_unknown_ids_unreadable_receipts_and_debates_without_receipts_exit_2(workspace: Workspace) -> None:
    store = open_store(workspace.home)
    try:
        store.append("deb-old", DebateCreated(state=DebateState(id="deb-old", problem="An older debate")))
    finally:
        store.close()

    unknown = workspace.run("verify", "deb-nope")
    assert unknown.returncode == 2
    assert unknown.stderr.startswith("error: no debate with id 'deb-nope'")

    none = workspace.run("verify", "deb-old")
    assert none.returncode == 2
    assert "has no receipt" in none.stderr and len(none.stderr.strip().splitlines()) == 1

    (workspace.root / "junk.json").write_text("{not json", encoding="utf-8")
    junk = workspace.run("verify", "junk.json")
    assert junk.returncode == 2 and "is not JSON" in junk.stderr

    missing = workspace.run("verify", "missing.json")
    assert missing.returncode == 2 and "receipt file not found: missing.json" in missing.stderr
