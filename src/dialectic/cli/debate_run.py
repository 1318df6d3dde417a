"""What ``dialectic debate`` and ``dialectic resume`` do: check everything, then run the engine.

Everything the user gave is checked (problem, files, configuration, overrides, API keys)
before a debate is created, so a mistake never leaves a half-made debate behind. Imported
by :mod:`dialectic.cli.debate_command` when one of the two commands runs, never while the app is
built: it loads the engine, the store and the configuration code.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from dialectic.cli.answers import (
    Answerer,
    load_answers_file,
    resume_answers_warnings,
    unmatched_answer_ids,
    unmatched_answers_warning,
)
from dialectic.cli.budget_flags import checked_budget, with_budget
from dialectic.cli.command_setup import load_environment, open_debate_store
from dialectic.cli.console import Terminal
from dialectic.cli.hook_flags import checked_hook_flags, run_hooks
from dialectic.cli.inputs import require_one_problem, resolve_problem
from dialectic.cli.output import OutputTarget, check_output, check_report, emit_results
from dialectic.cli.session import DebateSession
from dialectic.cli.tracing_flags import tracing_for
from dialectic.cli.turns import TurnWriter, read_turn_files
from dialectic.cli.verbose import summary_lines
from dialectic.cli.verify_run import receipt_signer
from dialectic.cli.window_flags import parse_windows
from dialectic.core.domain import DebateState
from dialectic.core.errors import DebateStateError, InvalidArgumentsError
from dialectic.core.receipts import ReceiptSigner
from dialectic.engine import DebateRequest
from dialectic.engine.api import BudgetChange, checked_windows
from dialectic.engine.seats import turn_texts
from dialectic.loading.setup import Overrides, check_ready, prepare_config
from dialectic.store import DebateStore
from dialectic.tracing.settings import TraceSettings


@dataclass(frozen=True, kw_only=True)
class SessionFlags:
    """The flags ``debate`` and ``resume`` share: how the session runs, what it writes, who hears of its end."""

    answers: Path | None = None
    output: str | None = None
    report: str | None = None
    verbose: bool = False
    store: str | None = None
    env_file: Path | None = None
    budget_usd: float | None = None
    budget_tokens: int | None = None
    trace: bool = False
    trace_content: bool = False
    editor: bool = False
    sign_key: Path | None = None
    notify: list[str] | None = None
    on_complete: str | None = None


@dataclass(frozen=True, kw_only=True)
class DebateFlags(SessionFlags):
    """``dialectic debate``'s flags, built once by :func:`dialectic.cli.debate_command.debate` and passed whole
    (what each one means is its help there)."""

    problem: str | None = None
    problem_file: Path | None = None
    agents: str | None = None
    rounds: int | None = None
    debate_format: str | None = None
    problem_kind: str | None = None
    max_answers: int | None = None
    config: Path | None = None
    lenient: bool = False
    clarify: bool = False
    context: Path | None = None
    context_mode: str | None = None
    provider: str | None = None
    model: str | None = None
    model_path: Path | None = None
    allow_outside_prompts: bool = False
    cache: bool = False
    pool: Path | None = None
    team: int | None = None


@dataclass(frozen=True, kw_only=True)
class ResumeFlags(SessionFlags):
    """``dialectic resume``'s flags, built once by :func:`dialectic.cli.debate_command.resume` and passed whole."""

    debate_id: str
    window: list[str] | None = None
    turn_files: list[str] | None = None


def run_debate(flags: DebateFlags) -> None:
    """``dialectic debate``: the flags are described in :func:`dialectic.cli.debate_command.debate`."""
    term = Terminal()
    load_environment(flags.env_file)
    require_one_problem(flags.problem, flags.problem_file)
    budget = checked_budget(flags.budget_usd, flags.budget_tokens)
    hook_flags = checked_hook_flags(flags.notify, flags.on_complete)
    answer_book = load_answers_file(flags.answers) if flags.answers is not None else None
    prepared = prepare_config(flags.config, _overrides(flags, budget), size_local=True, check=False)
    resolved = prepared.config
    text = resolve_problem(flags.problem, flags.problem_file, resolved.limits)
    for line in prepared.notes:
        term.line(line)
    for warning in prepared.warnings:
        term.warning(warning)
    check_ready(resolved, prepared.directory)
    asks = flags.clarify or resolved.debate.interactive_clarifications
    if answer_book is not None and not asks:
        term.warning("--answers is not used without --clarify: no clarifying questions will be asked")
    tracing = tracing_for(flags.trace, flags.trace_content, term)
    output_target, report_target = check_targets(flags.output, flags.report)
    signer = receipt_signer(flags.sign_key)
    debate_store, store_flag = open_debate_store(flags.store)
    request = DebateRequest(problem=text, config=resolved, config_dir=prepared.directory, clarify=flags.clarify)
    session = new_session(
        debate_store,
        store_flag,
        term,
        answer_book,
        verbose=flags.verbose,
        tracing=tracing,
        editor=flags.editor,
        signer=signer,
    )
    try:
        state = session.start(request)
        if answer_book and asks:
            _warn_unmatched_answers(answer_book, state, term)
        finish_run(state, output=output_target, report=report_target, verbose=flags.verbose, term=term)
    finally:
        session.announce_saved()
        run_hooks(debate_store, session.debate_id, hook_flags, output=output_target, report=report_target)
        debate_store.close()


def _overrides(flags: DebateFlags, budget: BudgetChange | None) -> Overrides:
    """What the flags lay over the configuration file (``--model-path``: the local provider with that model)."""
    provider, model = _model_path_provider(flags.provider, flags.model, flags.model_path)
    return Overrides(
        rounds=flags.rounds,
        roles=flags.agents,
        provider=provider,
        model=model,
        debate_format=flags.debate_format,
        problem_kind=flags.problem_kind,
        max_answers=flags.max_answers,
        allow_outside_prompts=flags.allow_outside_prompts,
        budget_usd=budget.max_cost_usd if budget else None,
        budget_tokens=budget.max_tokens if budget else None,
        context_dir=flags.context,
        context_mode=flags.context_mode,
        cache="read" if flags.cache else None,
        team_pool=flags.pool,
        team_size=flags.team,
        lenient=flags.lenient,
    )


def resume_debate(flags: ResumeFlags) -> None:
    """``dialectic resume``: the flags are described in :func:`dialectic.cli.debate_command.resume`."""
    debate_id = flags.debate_id
    term = Terminal()
    load_environment(flags.env_file)
    budget = checked_budget(flags.budget_usd, flags.budget_tokens)
    windows = parse_windows(flags.window)
    hook_flags = checked_hook_flags(flags.notify, flags.on_complete)
    answer_book = load_answers_file(flags.answers) if flags.answers is not None else None
    written = read_turn_files(flags.turn_files) if flags.turn_files else None
    signer = receipt_signer(flags.sign_key)
    debate_store, store_flag = open_debate_store(flags.store, create=False)
    try:
        state = debate_store.load(debate_id)
        if state.status == "completed":
            raise DebateStateError(f"debate {debate_id} is already completed; see it with: dialectic show {debate_id}")
        if state.config:
            saved = with_budget(state.config_or_defaults(), budget)
            checked_windows(saved, windows)
            check_ready(saved, state.config_dir())
        tracing = tracing_for(flags.trace, flags.trace_content, term)
        output_target, report_target = check_targets(flags.output, flags.report)
        if answer_book is not None:
            for warning in resume_answers_warnings(answer_book, state):
                term.warning(warning)
        if written is not None:
            turn_texts(state, written)  # a debate that waits for no such turn is refused before it runs
        session = new_session(
            debate_store,
            store_flag,
            term,
            answer_book,
            verbose=flags.verbose,
            tracing=tracing,
            editor=flags.editor,
            turns=written,
            signer=signer,
        )
        try:
            resumed = session.resume(state, budget=budget, windows=windows)
            finish_run(resumed, output=output_target, report=report_target, verbose=flags.verbose, term=term)
        finally:
            session.announce_saved()
            run_hooks(
                debate_store,
                session.debate_id,
                hook_flags,
                output=output_target,
                report=report_target,
                changed_after=state.updated_at,
            )
    finally:
        debate_store.close()


def _model_path_provider(
    provider: str | None, model: str | None, model_path: Path | None
) -> tuple[str | None, str | None]:
    """``--model-path`` means the local provider with that file as its model."""
    if model_path is None:
        return provider, model
    if provider not in (None, "local"):
        raise InvalidArgumentsError("--model-path runs the local provider; it cannot be combined with --provider")
    if not model_path.is_file():
        raise InvalidArgumentsError(f"--model-path {model_path}: no such file")
    if model_path.suffix.lower() != ".gguf":
        raise InvalidArgumentsError(f"--model-path {model_path}: expected a .gguf model file")
    return "local", str(model_path.resolve())


def new_session(
    store: DebateStore,
    store_flag: str | None,
    term: Terminal,
    answers: dict[str, str] | None,
    *,
    verbose: bool,
    tracing: TraceSettings | None,
    editor: bool = False,
    turns: list[tuple[str | None, str]] | None = None,
    signer: ReceiptSigner | None = None,
) -> DebateSession:
    answerer = Answerer.for_cli(answers, sys.stdin, term)
    writer = TurnWriter(term, files=turns, stdin=sys.stdin, use_editor=editor)
    return DebateSession(
        store,
        term,
        answerer=answerer,
        verbose=verbose,
        store_flag=store_flag,
        tracing=tracing,
        turns=writer,
        signer=signer,
    )


def check_targets(output: str | None, report: str | None) -> tuple[OutputTarget | None, OutputTarget | None]:
    """Every output path checked (parents created) before the debate is created or resumed."""
    output_target = check_output(output, "--output") if output is not None else None
    report_target = check_report(report, "--report") if report is not None else None
    return output_target, report_target


def _warn_unmatched_answers(answers: dict[str, str], state: DebateState, term: Terminal) -> None:
    unmatched = unmatched_answer_ids(answers, state)
    if unmatched:
        term.warning(unmatched_answers_warning(unmatched))


def finish_run(
    state: DebateState, *, output: OutputTarget | None, report: OutputTarget | None, verbose: bool, term: Terminal
) -> None:
    if state.status == "completed":
        emit_results(state, output=output, report=report, verbose=verbose, term=term)
    if verbose:
        for line in summary_lines(state):
            term.line(line, style="dim")
