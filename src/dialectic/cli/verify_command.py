"""The ``dialectic verify`` command: check a debate's stored record against its receipt.

Declarations only (the arguments and the help), imported while the app is built: what the command
does is in :mod:`dialectic.cli.verify_run`, imported when it runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from dialectic.cli.options import StoreOption


def verify(
    target: Annotated[
        str,
        typer.Argument(
            metavar="ID|RECEIPT.json",
            help="A debate's id (checked against the receipt saved with it), or a receipt file: a receipt, or an "
            "export that carries one (checked against the debate it names).",
        ),
    ],
    store: StoreOption = None,
    public_key: Annotated[
        Path | None,
        typer.Option(
            "--public-key",
            metavar="PATH",
            help="The Ed25519 public key the receipt must be signed with (PEM or OpenSSH).",
        ),
    ] = None,
) -> None:
    """Recompute a debate's receipt (a hash chain over its stored changes) and say whether the record matches.

    Exit 0: it matches; 1: it does not (the first change that differs is named), or the signature does
    not verify; 2: no such debate, no receipt, or an unreadable receipt file."""
    from dialectic.cli.verify_run import verify as run_verify

    run_verify(target, store=store, public_key=public_key)
