"""The ``dialectic memory`` commands: the debates usable as memory (``debate.memory: on``), and forgetting one.

Declarations only (the arguments and the help), imported while the app is built: what the commands
do is in :mod:`dialectic.cli.memory_run`, imported when one runs.
"""

from __future__ import annotations

from typing import Annotated

import typer

from dialectic.cli.options import StoreOption

MemoryIdArgument = Annotated[str, typer.Argument(metavar="ID", help="The debate's id (see dialectic memory list).")]

memory = typer.Typer(
    name="memory",
    help="The past debates a debate with debate.memory: on may recall (see docs/memory.md).",
    add_completion=False,
    rich_markup_mode=None,
)


@memory.callback(invoke_without_command=True)
def _memory_help(ctx: typer.Context) -> None:
    """The past debates a debate with debate.memory: on may recall (see docs/memory.md)."""
    if ctx.invoked_subcommand is None:
        typer.echo(ctx.get_help())
        raise typer.Exit(0)


@memory.command("list")
def list_memories(
    limit: Annotated[int | None, typer.Option("--limit", help="At most this many debates (newest first).")] = None,
    store: StoreOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the list as JSON.")] = False,
) -> None:
    """List the debates usable as memory: completed, with an outcome, not forgotten (newest first)."""
    from dialectic.cli.memory_run import list_memories as run_list

    run_list(limit=limit, store=store, as_json=as_json)


@memory.command("show")
def show_memory(debate_id: MemoryIdArgument, store: StoreOption = None) -> None:
    """Show what one debate would give a later debate's round 1 as memory."""
    from dialectic.cli.memory_run import show_memory as run_show

    run_show(debate_id, store=store)


@memory.command("forget")
def forget_memory(debate_id: MemoryIdArgument, store: StoreOption = None) -> None:
    """Never use one debate as memory again (the debate itself is kept; the flag is saved with it)."""
    from dialectic.cli.memory_run import forget_memory as run_forget

    run_forget(debate_id, store=store)
