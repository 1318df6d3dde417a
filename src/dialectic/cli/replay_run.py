"""What ``dialectic replay`` does: check everything, then start a new debate that reads the call cache."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from dialectic.cli.command_setup import load_environment, open_debate_store
from dialectic.cli.console import Terminal
from dialectic.cli.debate_run import check_targets, finish_run, new_session
from dialectic.cli.hook_flags import checked_hook_flags, run_hooks
from dialectic.cli.tracing_flags import tracing_for
from dialectic.loading.replay import replay_request
from dialectic.loading.setup import check_ready


@dataclass(frozen=True)
class ReplayFlags:
    """``dialectic replay``'s flags, built once by :func:`dialectic.cli.replay_command.replay` and passed whole."""

    debate_id: str
    config: Path | None
    judge: str | None
    judge_provider: str | None
    output: str | None
    report: str | None
    verbose: bool
    store: str | None
    env_file: Path | None
    trace: bool = False
    trace_content: bool = False
    notify: list[str] | None = None
    on_complete: str | None = None
    lenient: bool = False


def replay_debate(flags: ReplayFlags) -> None:
    """``dialectic replay``: the flags are described in :func:`dialectic.cli.replay_command.replay`."""
    verbose = flags.verbose
    term = Terminal()
    load_environment(flags.env_file)
    hook_flags = checked_hook_flags(flags.notify, flags.on_complete)
    debate_store, store_flag = open_debate_store(flags.store, create=False)
    try:
        original = debate_store.load(flags.debate_id)
        replayed = replay_request(
            original, flags.config, judge_provider=flags.judge_provider, judge_model=flags.judge, lenient=flags.lenient
        )
        for warning in replayed.warnings:
            term.warning(warning)
        check_ready(replayed.request.config, replayed.request.config_dir)
        tracing = tracing_for(flags.trace, flags.trace_content, term)
        output_target, report_target = check_targets(flags.output, flags.report)
        session = new_session(debate_store, store_flag, term, None, verbose=verbose, tracing=tracing)
        try:
            state = session.start(replayed.request)
            finish_run(state, output=output_target, report=report_target, verbose=verbose, term=term)
        finally:
            session.announce_saved()
            run_hooks(debate_store, session.debate_id, hook_flags, output=output_target, report=report_target)
    finally:
        debate_store.close()
