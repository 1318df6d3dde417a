"""What ``dialectic verify`` does, and the receipt signer ``debate`` and ``resume`` run with.

Imported when one of those commands runs, never while the app is built.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from pydantic import ValidationError

from dialectic.cli.command_setup import open_debate_store
from dialectic.core import environment
from dialectic.core.domain import Receipt
from dialectic.core.errors import DialecticError, InvalidArgumentsError
from dialectic.core.files import RECEIPT_FILE, parse_json, read_user_text
from dialectic.core.receipts import (
    ReceiptSigner,
    load_public_key,
    load_signer,
    stored_receipt,
    verify_log,
)

EXIT_MISMATCH = 1
"""``verify``'s exit code when the record does not match its receipt (or the signature does not verify)."""


class ReceiptMismatch(DialecticError):
    """The stored record does not match the receipt: ``verify`` fails with exit 1."""

    exit_code = EXIT_MISMATCH


def receipt_signer(sign_key: Path | None) -> ReceiptSigner | None:
    """The signer of ``--sign-key``, else of ``$DIALECTIC_RECEIPT_KEY``; ``None`` when neither is given.

    Loaded before the debate is created, so a bad key never leaves a half-made debate."""
    if sign_key is not None:
        return load_signer(sign_key)
    from_env = environment.receipt_key()
    return load_signer(from_env) if from_env else None


def verify(target: str, *, store: str | None, public_key: Path | None) -> None:
    """``dialectic verify``: one line on stdout when the record matches, else a :class:`ReceiptMismatch`."""
    key = load_public_key(public_key) if public_key is not None else None
    given = _receipt_file(target) if _is_file_target(target) else None
    debate_id = given.debate_id if given is not None else target
    debate_store, _ = open_debate_store(store, create=False)
    try:
        log = debate_store.changes(debate_id)
    finally:
        debate_store.close()
    receipt = given if given is not None else stored_receipt(log)
    if receipt is None:
        raise InvalidArgumentsError(
            f"debate {debate_id} has no receipt (it has not completed, or it completed before receipts were kept)"
        )
    found = verify_log(receipt, log, public_key=key)
    if not found.ok:
        raise ReceiptMismatch(f"not verified: debate {debate_id}: {found.problem}")
    line = f"verified: {receipt.count} changes, digest {receipt.algorithm}:{found.digest}"
    if found.signature is not None:
        line += f"; {found.signature}"
    if found.later:
        line += f"; {found.later} later change(s) not covered by the receipt"
    sys.stdout.write(line + "\n")


def _is_file_target(target: str) -> bool:
    """A receipt file rather than a debate id: a path that exists, or that looks like one."""
    return target.lower().endswith(".json") or os.sep in target or Path(target).is_file()


def _receipt_file(target: str) -> Receipt:
    """The receipt in a JSON file: a receipt itself, or an export (``dialectic export``) that carries one."""
    text = read_user_text(Path(target).expanduser(), RECEIPT_FILE)  # never a device, a FIFO, nor 10 GB
    try:
        data = parse_json(text)
    except ValueError as exc:
        raise InvalidArgumentsError(f"the receipt {target} is not JSON: {exc}") from exc
    if isinstance(data, dict) and isinstance(data.get("receipt"), dict):
        data = data["receipt"]
    try:
        return Receipt.model_validate(data)
    except ValidationError as exc:
        raise InvalidArgumentsError(f"{target} is not a receipt (nor an export that carries one)") from exc
