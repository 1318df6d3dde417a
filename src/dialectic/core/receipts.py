"""Receipts: a SHA-256 hash chain over a debate's stored changes, optionally signed with Ed25519.

A debate's log (:mod:`dialectic.core.changes`) is what a receipt vouches for: the problem (the
debate's creation), every contribution, the solution, the verdict and every other change, in the
order the store keeps them. Each change is written as canonical JSON (its stored fields, camelCase,
keys sorted, no spaces, UTF-8), and each link of the chain is ``SHA-256(previous link || change)``,
the first one's previous link being 32 zero bytes. The receipt keeps every link, so a record that no
longer matches names the first change that differs; its last link is the receipt's digest, which
export and the report carry and which a signature covers.

Receipts (:class:`~dialectic.core.changes.ReceiptRecorded`) are never part of a chain. Pure
functions, but for signing and checking signatures, which need the ``cryptography`` package
(the ``receipts`` extra), imported only then.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from dialectic.core import environment
from dialectic.core.changes import (
    Change,
    ContributionRecorded,
    DebateCreated,
    ReceiptRecorded,
    RoundStarted,
    StatusChanged,
    SummaryRecorded,
)
from dialectic.core.domain import Receipt, utc_now
from dialectic.core.errors import ConfigError
from dialectic.core.extras import EXTRA_MODULES, MissingExtraError, missing_module
from dialectic.core.files import KEY_FILE, read_user_bytes

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

ALGORITHM = "sha256-chain"
"""The receipt's algorithm: SHA-256 links over canonical JSON changes (this module's docstring)."""
SIGNATURE_ALGORITHM = "ed25519"
KEY_ENV_VAR = environment.RECEIPT_KEY
"""The environment variable naming the private key file that signs receipts (``--sign-key`` wins)."""
_GENESIS = bytes(32)


def canonical(change: Change) -> bytes:
    """The change as the chain hashes it: its stored JSON fields, keys sorted, compact, UTF-8."""
    data = change.model_dump(mode="json", by_alias=True, exclude_none=True)
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def chained(changes: Sequence[Change]) -> list[str]:
    """Every link of the chain over ``changes`` (hex), in order."""
    links: list[str] = []
    previous = _GENESIS
    for change in changes:
        link = hashlib.sha256(previous + canonical(change)).digest()
        links.append(link.hex())
        previous = link
    return links


def covered(log: Sequence[Change]) -> list[Change]:
    """The changes of a stored log that a chain covers: all but receipts."""
    return [change for change in log if not isinstance(change, ReceiptRecorded)]


def stored_receipt(log: Sequence[Change]) -> Receipt | None:
    """The last receipt saved in a log, or ``None``."""
    receipts = [change.receipt for change in log if isinstance(change, ReceiptRecorded)]
    return receipts[-1] if receipts else None


def make_receipt(
    debate_id: str, log: Sequence[Change], *, signer: ReceiptSigner | None = None, now: datetime | None = None
) -> Receipt:
    """The receipt of ``log`` (a debate's stored changes, as the store gives them back)."""
    links = chained(covered(log))
    if not links:
        raise ValueError(f"debate '{debate_id}' has no changes to make a receipt of")
    receipt = Receipt(
        debate_id=debate_id,
        algorithm=ALGORITHM,
        count=len(links),
        digest=links[-1],
        links=links,
        created_at=now or utc_now(),
    )
    if signer is not None:
        receipt.signature = signer.sign(receipt.digest)
        receipt.public_key = signer.public_key
    return receipt


def describe(change: Change) -> str:
    """What a change is, in a few words (for the message that names it)."""
    if isinstance(change, DebateCreated):
        return "the debate's creation (problem, participants, configuration)"
    if isinstance(change, ContributionRecorded):
        c = change.contribution
        target = f" of {c.target_agent_id}" if c.target_agent_id else ""
        return f"the {c.type}{target} by {c.agent_id} in round {change.round_number}"
    if isinstance(change, SummaryRecorded):
        return f"the summary by {change.summary.agent_id} in round {change.round_number}"
    if isinstance(change, RoundStarted):
        return f"the start of round {change.round_number}"
    if isinstance(change, StatusChanged):
        return f"the status change to {change.status}"
    return change.kind.replace("_", " ")


@dataclass(frozen=True)
class Mismatch:
    """The first change that does not match the receipt."""

    number: int
    """Its number in the chain (the first change is 1)."""
    kind: str | None
    """Its kind; ``None`` when the change is missing from the log."""
    what: str

    def text(self) -> str:
        if self.kind is None:
            return f"change #{self.number} is missing ({self.what})"
        return f"change #{self.number} ({self.kind}: {self.what}) does not match the receipt"


@dataclass(frozen=True)
class Verification:
    """What checking a receipt against a log found."""

    receipt: Receipt
    digest: str
    """The digest recomputed from the log (over the receipt's ``count`` changes, or all there are)."""
    mismatch: Mismatch | None = None
    problem: str | None = None
    """Why the record does not match, in one line; ``None`` when it matches."""
    later: int = 0
    """Changes saved after those the receipt covers (not vouched for)."""
    signature: str | None = None
    """How the signature was checked (``None``: the receipt is not signed)."""

    @property
    def ok(self) -> bool:
        return self.problem is None


def verify_log(receipt: Receipt, log: Sequence[Change], *, public_key: bytes | None = None) -> Verification:
    """Check ``receipt`` against a debate's stored ``log``; with ``public_key`` (raw Ed25519), its signature too.

    The record matches when the chain over the log's first ``receipt.count`` changes ends in the
    receipt's digest. When it does not, the first change whose link differs from the receipt's is
    named (or the first missing one, when the log is shorter).
    """
    changes = covered(log)
    mine = changes[: receipt.count]
    links = chained(mine)
    digest = links[-1] if links else _GENESIS.hex()
    later = max(len(changes) - receipt.count, 0)
    if receipt.algorithm != ALGORITHM:
        return Verification(receipt, digest, problem=f"unknown receipt algorithm '{receipt.algorithm}'")
    if receipt.count < 1:
        return Verification(receipt, digest, problem=f"the receipt covers no changes (count {receipt.count})")
    if len(mine) == receipt.count and digest == receipt.digest:
        if receipt.links and receipt.links[-1] != receipt.digest:
            problem = "the receipt is inconsistent: its last link is not its digest"
            return Verification(receipt, digest, problem=problem, later=later)
        return _signed(Verification(receipt, digest, later=later), public_key)
    mismatch = _first_mismatch(receipt, mine, links)
    if mismatch is not None:
        return Verification(receipt, digest, mismatch=mismatch, problem=mismatch.text(), later=later)
    problem = "the record does not match the receipt's digest (its links do not tell which change differs)"
    return Verification(receipt, digest, problem=problem, later=later)


def _first_mismatch(receipt: Receipt, mine: Sequence[Change], links: Sequence[str]) -> Mismatch | None:
    for index, link in enumerate(links):
        if index >= len(receipt.links):
            break
        if link != receipt.links[index]:
            return Mismatch(index + 1, mine[index].kind, describe(mine[index]))
    if len(mine) < receipt.count:
        return Mismatch(len(mine) + 1, None, f"the receipt covers {receipt.count} changes, the store has {len(mine)}")
    return None


def _signed(found: Verification, public_key: bytes | None) -> Verification:
    """``found`` (a matching record) with its signature checked: against ``public_key`` when given,
    else only against the key the receipt names (which proves nothing about who signed it)."""
    receipt = found.receipt
    if receipt.signature is None:
        if public_key is not None:
            return replace(found, problem="the receipt is not signed, but a public key was given")
        return found
    key = public_key if public_key is not None else _hex(receipt.public_key)
    if key is None:
        return replace(found, problem="the receipt is signed but names no public key (give --public-key)")
    if not check_signature(receipt.digest, receipt.signature, key):
        whose = "the public key given" if public_key is not None else "the key the receipt names"
        return replace(found, problem=f"the receipt's signature does not verify with {whose}")
    if public_key is not None:
        return replace(found, signature=f"signature verified with key {fingerprint(key)}")
    return replace(found, signature=f"signed by key {fingerprint(key)} (unchecked: give --public-key to trust it)")


def _hex(text: str | None) -> bytes | None:
    if text is None:
        return None
    try:
        return bytes.fromhex(text)
    except ValueError:
        return None


def fingerprint(public_key: bytes) -> str:
    """A short name for a public key: the first 16 hex digits of its SHA-256."""
    return hashlib.sha256(public_key).hexdigest()[:16]


class ReceiptSigner:
    """Signs receipts' digests with an Ed25519 private key (``cryptography`` needed)."""

    def __init__(self, private_key: Ed25519PrivateKey, source: str) -> None:
        from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

        self._key = private_key
        self.source = source
        self.public_key = private_key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw).hex()

    def sign(self, digest: str) -> str:
        signature: bytes = self._key.sign(bytes.fromhex(digest))
        return signature.hex()


def _cryptography() -> ModuleType:
    """``cryptography``'s serialization module; :class:`MissingExtraError` (exit 4) without the package."""
    missing = missing_module(EXTRA_MODULES["receipts"])
    if missing is not None:
        raise MissingExtraError("signing or checking a receipt's signature", "receipts", missing)
    from cryptography.hazmat.primitives import serialization

    return serialization


def _read_key_file(path: Path, what: str) -> bytes:
    """The key file, read as every file the user names is (:mod:`dialectic.core.files`): a device, a FIFO or a
    file larger than a key is refused (exit 4) without being read."""
    return read_user_bytes(path.expanduser(), replace(KEY_FILE, label=what))


def _first_parse(data: bytes, *loaders: Callable[[bytes], object]) -> object:
    """What the first of ``loaders`` that understands ``data`` makes of it (``None``: none does).

    A loader refuses what it cannot read with ``ValueError`` or ``TypeError``, and a key of a kind the
    library does not support (a PEM of some other algorithm, text that names one) with ``UnsupportedAlgorithm``."""
    from cryptography.exceptions import UnsupportedAlgorithm

    for loader in loaders:
        try:
            return loader(data)
        except (ValueError, TypeError, UnsupportedAlgorithm):
            continue
    return None


def load_signer(path: str | Path) -> ReceiptSigner:
    """The signer of the Ed25519 private key in ``path`` (PEM, as ``openssl genpkey -algorithm ed25519``
    writes it, or OpenSSH, as ``ssh-keygen -t ed25519 -N ''`` does); :class:`ConfigError` if it is not one."""
    serialization = _cryptography()
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    path = Path(path)
    data = _read_key_file(path, "receipt signing key")
    key = _first_parse(
        data,
        lambda raw: serialization.load_pem_private_key(raw, password=None),
        lambda raw: serialization.load_ssh_private_key(raw, password=None),
    )
    if not isinstance(key, Ed25519PrivateKey):
        raise ConfigError(f"{path} is not an unencrypted Ed25519 private key (PEM or OpenSSH)")
    return ReceiptSigner(key, str(path))


def load_public_key(path: str | Path) -> bytes:
    """The raw Ed25519 public key in ``path`` (PEM, or an OpenSSH ``ssh-ed25519`` line)."""
    serialization = _cryptography()
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    path = Path(path)
    data = _read_key_file(path, "public key")
    key = _first_parse(data, serialization.load_pem_public_key, serialization.load_ssh_public_key)
    if not isinstance(key, Ed25519PublicKey):
        raise ConfigError(f"{path} is not an Ed25519 public key (PEM or OpenSSH)")
    raw: bytes = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return raw


def check_signature(digest: str, signature: str, public_key: bytes) -> bool:
    """Whether ``signature`` (hex) is ``public_key``'s Ed25519 signature of the digest's bytes."""
    _cryptography()
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    try:
        Ed25519PublicKey.from_public_bytes(public_key).verify(bytes.fromhex(signature), bytes.fromhex(digest))
    except (InvalidSignature, ValueError):
        return False
    return True
