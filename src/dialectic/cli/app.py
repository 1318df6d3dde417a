"""The ``dialectic`` command: the Typer app and the boundary that turns errors into exit codes.

:func:`main` is the only place that decides what the user sees when something goes wrong:
a :class:`~dialectic.core.errors.DialecticError` becomes ``error: <message>`` and its exit code,
a usage mistake one line and exit 2, Ctrl-C a note on what was saved and exit 130 (SIGHUP
129, SIGTERM 143: 128 + the signal number), and anything unexpected one line and exit 1
(the traceback only with ``--verbose``). Everything printed here passes through
:func:`~dialectic.cli.redaction.redact`, so a provider's error body never shows a key.

A command loads only what it uses: building the app imports the commands' declarations
(their flags and help), and each command imports its implementation when it runs, so
``--help`` and ``--version`` load neither the engine, the store, pydantic nor an SDK.
``tests/test_imports.py`` holds every command to that.
"""

from __future__ import annotations

import os
import re
import sys
from typing import Annotated, Any, NoReturn

import typer

from dialectic.cli.batch_command import batch
from dialectic.cli.bench_command import bench
from dialectic.cli.browse_command import export, list_debates, report, show
from dialectic.cli.debate_command import debate, resume
from dialectic.cli.eval_command import evaluate
from dialectic.cli.interruptions import EXIT_INTERRUPTED, InterruptedRun, Terminated, exit_code_for, signal_name
from dialectic.cli.leaderboard_command import leaderboard
from dialectic.cli.mcp_command import mcp
from dialectic.cli.memory_command import memory
from dialectic.cli.models_command import models
from dialectic.cli.replay_command import replay
from dialectic.cli.serve_command import serve
from dialectic.cli.verify_command import verify
from dialectic.core.errors import EXIT_GENERAL_ERROR, EXIT_INVALID_ARGS, DialecticError
from dialectic.core.redaction import redact
from dialectic.core.spelling import did_you_mean, nearest

app = typer.Typer(
    name="dialectic",
    help="Multi-agent LLM debates: agents propose, critique and refine; a judge synthesizes.",
    add_completion=False,
    pretty_exceptions_enable=False,
    # Plain help: Typer's Rich panels print a type after every flag ("--clarify <bool>"),
    # as if the flag took a value, and cut long option names short.
    rich_markup_mode=None,
)


def package_version() -> str:
    """The package's version (``pyproject.toml``'s ``version``, kept in :mod:`dialectic._version`)."""
    from dialectic._version import __version__  # only --version pays for it

    return __version__


def _print_version(value: bool) -> None:
    if value:
        sys.stdout.write(f"dialectic {package_version()}\n")
        raise typer.Exit(0)


@app.callback()
def _main_options(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_print_version, is_eager=True, help="Print the version and exit."),
    ] = False,
) -> None:
    """Multi-agent LLM debates: agents propose, critique and refine; a judge synthesizes."""


app.command("debate")(debate)
app.command("resume")(resume)
app.command("replay")(replay)
app.command("list")(list_debates)
app.command("show")(show)
app.command("export")(export)
app.command("report")(report)
app.command("eval")(evaluate)
app.command("bench")(bench)
app.command("batch")(batch)
app.command("leaderboard")(leaderboard)
app.command("serve")(serve)
app.command("models")(models)
app.command("mcp")(mcp)
app.command("verify")(verify)
app.add_typer(memory, name="memory")


def _error(message: str) -> None:
    sys.stderr.write(f"error: {redact(' '.join(message.split()))}\n")
    sys.stderr.flush()


def _usage_message(exc: typer.TyperException) -> str:
    ctx = getattr(exc, "ctx", None)
    message = _unknown_name(exc, ctx) or exc.format_message()
    if ctx is not None and ctx.command_path:
        message += f" (see '{ctx.command_path} --help')"
    return message


def _unknown_name(exc: typer.TyperException, ctx: Any) -> str | None:
    """An unknown option or command in the one did-you-mean wording of every refusal of a name
    (:mod:`dialectic.core.spelling`: configuration keys, API fields, providers), not click's own."""
    if ctx is None:
        return None
    option = getattr(exc, "option_name", None)  # click's NoSuchOption (typer ships its own copy of click)
    if isinstance(option, str):
        shown = [param for param in ctx.command.params if not getattr(param, "hidden", False)]
        known = [name for param in shown for name in (*param.opts, *param.secondary_opts)]
        return f"unknown option {option}{did_you_mean(nearest(option, known))}"
    unknown = re.match(r"No such command '([^']+)'", exc.format_message())
    if unknown and hasattr(ctx.command, "list_commands"):
        name = unknown.group(1)
        return f"unknown command '{name}'{did_you_mean(nearest(name, ctx.command.list_commands(ctx)))}"
    return None


def run(argv: list[str]) -> int:
    """Run the app on ``argv`` and return the exit code; nothing escapes as a traceback."""
    verbose = "-v" in argv or "--verbose" in argv
    try:
        result = app(args=argv or ["--help"], prog_name="dialectic", standalone_mode=False)
    except DialecticError as exc:
        _error(exc.message)
        if verbose and exc.detail:
            sys.stderr.write(f"{redact(exc.detail)}\n")
        return exc.exit_code
    except InterruptedRun as exc:
        sys.stderr.write(f"{exc}\n")
        return exc.exit_code
    except Terminated as exc:
        _error(f"terminated by {signal_name(exc.signum)}")
        return exit_code_for(exc.signum)
    except KeyboardInterrupt:
        _error("interrupted")
        return EXIT_INTERRUPTED
    except typer.Abort:
        _error("aborted")
        return EXIT_GENERAL_ERROR
    except typer.TyperException as exc:
        _error(_usage_message(exc))
        return int(getattr(exc, "exit_code", EXIT_INVALID_ARGS))
    except Exception as exc:
        _error(f"unexpected {type(exc).__name__}: {exc}")
        if verbose:
            import traceback  # only here: it costs every command ~15 ms to import

            sys.stderr.write(redact(traceback.format_exc()))
        return EXIT_GENERAL_ERROR
    return result if isinstance(result, int) else 0


def main() -> None:
    """Console-script entry point: run the command, then leave without the interpreter's teardown."""
    leave(run(sys.argv[1:]))


def leave(code: int) -> NoReturn:
    """End the process with ``code`` once every output is flushed, skipping the interpreter's teardown.

    By the time a command returns it has done everything that must happen before exit: it
    closed its store (in a ``finally``), its files are complete (written atomically, so
    already renamed into place) and its event loop and provider clients are closed. What a
    normal exit would add is freeing every object and module one by one, about half a
    second after a debate, for nothing the user sees. So the buffered streams and the
    logging handlers (whose ``atexit`` hook will not run) are flushed, then ``os._exit``.

    Post-debate hooks still running (webhooks, ``--on-complete``) are waited for first, each within
    its own bound (:func:`dialectic.reporting.hooks.wait_pending`).

    The normal exit is kept when it could still matter: when flushing fails (stdout is a
    closed pipe: Python then reports it as it always does) and when a thread that is not a
    daemon is still alive (a normal exit waits for it).
    """
    hooks = sys.modules.get("dialectic.reporting.hooks")
    if hooks is not None:
        hooks.wait_pending()  # post-debate hooks still running, each for at most its own bound
    try:
        logging = sys.modules.get("logging")
        if logging is not None:
            logging.shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        sys.exit(code)
    if _other_threads_running():
        sys.exit(code)
    os._exit(code)


def _other_threads_running() -> bool:
    threading = sys.modules.get("threading")
    if threading is None:
        return False
    main_thread = threading.main_thread()
    return any(t is not main_thread and not t.daemon and t.is_alive() for t in threading.enumerate())
