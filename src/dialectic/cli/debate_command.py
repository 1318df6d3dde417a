"""``dialectic debate`` and ``dialectic resume``: their arguments, flags and help.

Declarations only, imported while the app is built: the work is done by
:mod:`dialectic.cli.debate_run`, imported when one of these commands runs, so ``--help``
and the other commands never load the engine, the store or the configuration code.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from dialectic.cli.options import (
    AnswersOption,
    BudgetTokensOption,
    BudgetUsdOption,
    EditorOption,
    EnvFileOption,
    LenientOption,
    NotifyOption,
    OnCompleteOption,
    OutputOption,
    ReportOption,
    SignKeyOption,
    StoreOption,
    TraceContentOption,
    TraceOption,
    VerboseOption,
    WindowOption,
)

FORMATS_HELP = (
    "auto, adaptive, critique-refine, free-form, round-limited, structured, convergence-seeking, simultaneous, vote, "
    "council, correction"
)
"""The formats as ``--format``'s help lists them (a test holds them equal to :data:`dialectic.core.config.FORMATS`)."""
DEFAULT_CONFIG_FILENAME = "debate-config.json"
"""``--config``'s default as the help states it: the same as
:data:`dialectic.loading.config.DEFAULT_CONFIG_FILENAME` (a test holds them equal), written out
here so that the help does not load the configuration code."""


def debate(
    problem: Annotated[str | None, typer.Argument(help="The problem to debate (or use --problem-file).")] = None,
    problem_file: Annotated[
        Path | None,
        typer.Option("--problem-file", "-f", help="Read the problem from this UTF-8 file."),
    ] = None,
    problem_description: Annotated[
        Path | None,
        typer.Option("--problemDescription", hidden=True, help="The seed's spelling of --problem-file."),
    ] = None,
    agents: Annotated[
        str | None, typer.Option("--agents", "-a", help="Comma-separated roles to keep, e.g. architect,security.")
    ] = None,
    rounds: Annotated[int | None, typer.Option("--rounds", "-r", help="Number of rounds (at least 1).")] = None,
    debate_format: Annotated[
        str | None,
        typer.Option(
            "--format",
            help=f"Deliberation protocol: {FORMATS_HELP} (default: the config's, else auto: adaptive for a "
            "question with one right answer, critique-refine for a design problem).",
        ),
    ] = None,
    problem_kind: Annotated[
        str | None,
        typer.Option(
            "--problem-kind",
            metavar="auto|design|reasoning",
            help="design: a design document; reasoning: one right answer, worked step by step "
            "(default: the config's, else detected from the problem).",
        ),
    ] = None,
    max_answers: Annotated[
        int | None,
        typer.Option(
            "--max-answers",
            metavar="N",
            help="The adaptive protocol's budget: at most N blind answers (2–64) before the vote "
            "(debate.answers.maxAnswers, default 5); agreeing answers still stop at two.",
        ),
    ] = None,
    config: Annotated[
        Path | None, typer.Option("--config", "-c", help=f"Configuration file (default: ./{DEFAULT_CONFIG_FILENAME}).")
    ] = None,
    lenient: LenientOption = False,
    output: OutputOption = None,
    report: ReportOption = None,
    clarify: Annotated[bool, typer.Option("--clarify", help="Let the agents ask clarifying questions first.")] = False,
    answers: AnswersOption = None,
    verbose: VerboseOption = False,
    env_file: EnvFileOption = None,
    context: Annotated[
        Path | None,
        typer.Option(
            "--context", help="A directory the agents may read (debate.context.dir): through tools, or pasted."
        ),
    ] = None,
    context_mode: Annotated[
        str | None,
        typer.Option(
            "--context-mode",
            help="How agents get --context: tools, paste or off (default: tools when every provider does tool calls).",
        ),
    ] = None,
    provider: Annotated[str | None, typer.Option("--provider", help="Provider for every agent and the judge.")] = None,
    model: Annotated[str | None, typer.Option("--model", help="Model for every agent and the judge.")] = None,
    model_path: Annotated[
        Path | None,
        typer.Option("--model-path", help="A GGUF model file: every agent and the judge run it on the local provider."),
    ] = None,
    store: StoreOption = None,
    allow_outside_prompts: Annotated[
        bool,
        typer.Option(
            "--allow-outside-prompts",
            help="Let the config's prompt paths point outside its directory (saved with the debate for resume).",
        ),
    ] = False,
    budget_usd: BudgetUsdOption = None,
    budget_tokens: BudgetTokensOption = None,
    trace: TraceOption = False,
    trace_content: TraceContentOption = False,
    editor: EditorOption = False,
    cache: Annotated[
        bool,
        typer.Option(
            "--cache",
            help="Answer a request sent before with the same inputs from the call cache instead of the provider "
            "(debate.cache: read; default: the config's, else off: fresh samples).",
        ),
    ] = False,
    sign_key: SignKeyOption = None,
    notify: NotifyOption = None,
    on_complete: OnCompleteOption = None,
    pool: Annotated[
        Path | None,
        typer.Option(
            "--pool",
            metavar="POOL.json",
            help="A JSON list of agent configurations to pick the team from (with --team; debate.team.pool).",
        ),
    ] = None,
    team: Annotated[
        int | None,
        typer.Option(
            "--team",
            metavar="N",
            help="Pick N agents (at least 2) of the pool by ELO rating and calibration, keeping models and roles "
            "diverse; the choice and its reasons are saved and shown in the report (debate.team.size).",
        ),
    ] = None,
) -> None:
    """Run a debate on a problem and print the judge's solution."""
    from dialectic.cli.debate_run import DebateFlags, run_debate

    if problem_file is not None and problem_description is not None:
        raise typer.BadParameter("give the problem file once (--problemDescription is --problem-file)")
    flags = DebateFlags(
        problem=problem,
        problem_file=problem_file or problem_description,
        agents=agents,
        rounds=rounds,
        debate_format=debate_format,
        problem_kind=problem_kind,
        max_answers=max_answers,
        config=config,
        lenient=lenient,
        output=output,
        report=report,
        clarify=clarify,
        answers=answers,
        verbose=verbose,
        env_file=env_file,
        context=context,
        context_mode=context_mode,
        provider=provider,
        model=model,
        model_path=model_path,
        store=store,
        allow_outside_prompts=allow_outside_prompts,
        budget_usd=budget_usd,
        budget_tokens=budget_tokens,
        trace=trace,
        trace_content=trace_content,
        editor=editor,
        cache=cache,
        sign_key=sign_key,
        notify=notify,
        on_complete=on_complete,
        pool=pool,
        team=team,
    )
    run_debate(flags)


def resume(
    debate_id: Annotated[str, typer.Argument(metavar="ID", help="The debate to continue.")],
    answers: AnswersOption = None,
    output: OutputOption = None,
    report: ReportOption = None,
    verbose: VerboseOption = False,
    store: StoreOption = None,
    env_file: EnvFileOption = None,
    budget_usd: BudgetUsdOption = None,
    budget_tokens: BudgetTokensOption = None,
    window: WindowOption = None,
    trace: TraceOption = False,
    trace_content: TraceContentOption = False,
    turn_file: Annotated[
        list[str] | None,
        typer.Option(
            "--turn-file",
            metavar="[KEY=]FILE",
            help="The text of a human seat's turn the debate waits for (KEY: the turn's; without it, the turns "
            "in the order asked); repeatable.",
        ),
    ] = None,
    editor: EditorOption = False,
    sign_key: SignKeyOption = None,
    notify: NotifyOption = None,
    on_complete: OnCompleteOption = None,
) -> None:
    """Continue a suspended, paused, interrupted or failed debate from where it stopped (a new budget or
    context window is kept)."""
    from dialectic.cli.debate_run import ResumeFlags, resume_debate

    flags = ResumeFlags(
        debate_id=debate_id,
        answers=answers,
        output=output,
        report=report,
        verbose=verbose,
        store=store,
        env_file=env_file,
        budget_usd=budget_usd,
        budget_tokens=budget_tokens,
        window=window,
        trace=trace,
        trace_content=trace_content,
        turn_files=turn_file,
        editor=editor,
        sign_key=sign_key,
        notify=notify,
        on_complete=on_complete,
    )
    resume_debate(flags)
