"""The MCP server: debates as job-style tools, and each debate's report as a resource.

A debate runs in the background of the server process (:mod:`dialectic.mcp_server.jobs`):
``start_debate`` returns as soon as the debate exists, ``debate_status`` and
``wait_for_debate`` follow it (the latter with progress notifications), ``answer_questions``
resumes one that stopped for clarifying questions, ``submit_turn`` one that waits for the turn
of a seat a person plays (``provider: human``), ``get_result`` gives the outcome,
``cancel_debate`` stops one (saved as ``interrupted``, resumable), ``list_debates`` lists
the store. Debates are kept in the CLI's store, so ``dialectic show``/``resume``/``report``
see them too.

A dialectic error (a bad argument, a missing key, an unknown id) becomes a tool error with
its one-line message; the debate, if it exists, stays saved.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError, UnexpectedToolError
from mcp.types import CallToolResult, InputRequiredResult
from pydantic import Field, ValidationError

from dialectic.core.config import ANSWER_BUDGET, FORMATS, SystemConfig
from dialectic.core.domain import DebateState, DebateStatus
from dialectic.core.errors import DebateBusyError, DebateNotFoundError, DebateStateError, DialecticError
from dialectic.core.events import Event
from dialectic.core.redaction import redact
from dialectic.core.spelling import nearest
from dialectic.engine.seats import turn_texts
from dialectic.front.debate import Debate
from dialectic.front.results import DebateResult
from dialectic.llm.registry import ProviderPool
from dialectic.loading.config import describe_validation_error
from dialectic.loading.keys import UnknownKey
from dialectic.mcp_server.jobs import Job, Jobs
from dialectic.mcp_server.options import AgentChoice, CallOptions, Transport, call_config
from dialectic.mcp_server.views import (
    REPORT_URI,
    Cancelled,
    Listing,
    Result,
    Started,
    Status,
    Waited,
    listed,
    result_of,
    status_of,
)
from dialectic.store import DebateStore

SERVER_NAME = "dialectic"
ACTIVE = ("running", "pending")
DEFAULT_WAIT_S = 60.0
MAX_WAIT_S = 300.0
"""``wait_for_debate`` returns after this long at most (the debate goes on): no call hangs for ever."""
INSTRUCTIONS = (
    "Run multi-agent debates on a problem: agents propose, critique and refine; a judge synthesizes. "
    "start_debate returns a debate id at once; follow it with wait_for_debate (progress notifications) "
    "or debate_status, answer pending clarifying questions with answer_questions, write the turns of seats a "
    "person plays (provider human) with submit_turn, then get_result. "
    "The full Markdown report is the resource dialectic://debates/{debate_id}/report."
)


@dataclass
class DebateService:
    """What the tools work with: the server's configuration, the store, the provider clients and the jobs."""

    config: SystemConfig
    directory: Path
    """Where the configuration's prompt paths (and a call's) resolve."""
    store: DebateStore
    transport: Transport = "stdio"
    providers: ProviderPool = field(default_factory=ProviderPool)
    jobs: Jobs = field(default_factory=Jobs)

    def __post_init__(self) -> None:
        self.debates = self.debate_on(self.config)
        """Debates on the server's configuration (and the store's reads: load, list)."""
        self.jobs.resumer = lambda debate_id: resumed_events(self.debates, debate_id, None)

    def debate_on(self, config: SystemConfig) -> Debate:
        """Debates on ``config``, in this server's store, with its provider clients (checked first)."""
        return Debate(config, config_dir=self.directory, store=self.store, providers=self.providers)

    def load(self, debate_id: str) -> DebateState:
        return self.debates.load(debate_id).state

    def status(self, debate_id: str) -> Status:
        return status_of(self.load(debate_id), self.jobs.get(debate_id))

    async def close(self) -> None:
        """Stop every run (saved as interrupted) and close the provider clients; the store is the caller's."""
        await self.jobs.close()
        await self.providers.aclose()


def resumed_events(
    debate: Debate, debate_id: str, answers: Mapping[str, str] | None, turns: Mapping[str, str] | None = None
) -> AsyncIterator[Event]:
    """A resumed run's events, as :meth:`Debate.stream` gives a new one's."""
    return debate.stream_resume(debate_id, answers, turns=turns)


@contextmanager
def reported() -> Iterator[None]:
    """A dialectic error as a tool error with its message (keys redacted)."""
    try:
        yield
    except DialecticError as exc:
        raise ToolError(redact(exc.message)) from None


class OneLineServer(MCPServer[Any]):
    """The SDK's server, saying arguments that fail a tool's schema on one line, as every other error is
    (the SDK gives pydantic's multi-line dump, with a link), and refusing an argument a tool does not take
    (the SDK would drop it: ``round`` for ``rounds`` would run the server's rounds without a word)."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        tool = next((tool for tool in await self.list_tools() if tool.name == name), None)
        if tool is not None:
            taken = list(tool.input_schema.get("properties", {}))
            unknown = [UnknownKey(str(key), nearest(str(key), taken)) for key in arguments if key not in taken]
            if unknown:
                raise ToolError(f"Error executing tool {name}: {'; '.join(key.describe() for key in unknown)}")
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(exc, UnexpectedToolError) or not isinstance(cause, ValidationError):
                raise
            raise ToolError(f"Error executing tool {name}: {describe_validation_error(cause)}") from cause


def build_server(service: DebateService) -> MCPServer:
    """The MCP server over ``service``: its tools and the report resource (no transport yet)."""
    server: MCPServer = OneLineServer(SERVER_NAME, instructions=INSTRUCTIONS, log_level="WARNING")
    _add_start_tool(server, service)
    _add_follow_tools(server, service)
    _add_resume_tools(server, service)
    _add_outcome_tools(server, service)
    _add_report_resource(server, service)
    return server


def _add_start_tool(server: MCPServer, service: DebateService) -> None:
    """``start_debate``: a debate on a problem, run in the background."""

    @server.tool()
    async def start_debate(
        problem: Annotated[str, Field(min_length=1, description="The problem or question to debate.")],
        rounds: Annotated[int | None, Field(description="Rounds of debate, 1 or more (default: the server's).")] = None,
        format: Annotated[
            str | None, Field(description=f"The deliberation protocol: one of {', '.join(FORMATS)}.")
        ] = None,
        max_answers: Annotated[
            int | None,
            Field(
                description=f"The adaptive protocol's most blind answers before it votes, {ANSWER_BUDGET[0]} to "
                f"{ANSWER_BUDGET[1]} (default: the server's)."
            ),
        ] = None,
        roles: Annotated[list[str] | None, Field(description="Keep only the server's agents with these roles.")] = None,
        agents: Annotated[
            list[AgentChoice] | None,
            Field(
                description="The participants instead of the server's agents (each a role, optionally "
                "a provider, model and temperature)."
            ),
        ] = None,
        config: Annotated[
            dict[str, Any] | None,
            Field(
                description="A whole debate configuration (as in debate-config.json) instead of the "
                "server's; over stdio only."
            ),
        ] = None,
        clarify: Annotated[
            bool, Field(description="Let the agents ask clarifying questions first (answer_questions).")
        ] = False,
    ) -> Started:
        """Start a debate on a problem; it runs in the background. Returns its id at once: follow it with
        wait_for_debate or debate_status, then get_result."""
        with reported():
            options = CallOptions(
                config=config, agents=agents, rounds=rounds, format=format, roles=roles, max_answers=max_answers
            )
            prepared = call_config(service.config, options, service.transport)
            debate = service.debate_on(prepared.config)
            job = await service.jobs.start(lambda: debate.stream(problem, clarify=clarify))
            state = service.load(job.debate_id)
            return Started(debate_id=state.id, status=state.status, warnings=prepared.warnings)


def _add_follow_tools(server: MCPServer, service: DebateService) -> None:
    """``debate_status`` and ``wait_for_debate``: where a running debate stands."""

    @server.tool()
    async def debate_status(debate_id: str) -> Status:
        """Where a debate stands: status, round, phase, progress, and the questions waiting for answers."""
        with reported():
            return service.status(debate_id)

    @server.tool()
    async def wait_for_debate(
        debate_id: str,
        ctx: Context,
        timeout_s: Annotated[
            float, Field(ge=0, le=MAX_WAIT_S, description="Return after this long at most (the debate goes on).")
        ] = DEFAULT_WAIT_S,
    ) -> Waited:
        """Wait until a debate stops running (completed, waiting for answers, failed, interrupted) or the
        timeout passes, with progress notifications as rounds and contributions complete."""
        with reported():
            service.load(debate_id)  # an unknown id is an error, not a wait
            job = service.jobs.get(debate_id)
            waited: bool | None = None
            if job is not None and job.running:
                told: tuple[float, str] = (-1.0, "")

                async def tell(moved: Job) -> None:
                    nonlocal told
                    message = moved.describe()
                    # progress must grow from one notification to the next; and say something new
                    if moved.progress > told[0] and message != told[1]:
                        told = (moved.progress, message)
                        await ctx.report_progress(moved.progress, moved.total, message)

                await tell(job)
                waited = await service.jobs.wait(job, timeout_s, tell)
            status = service.status(debate_id)
            # a debate another process runs is not waited for: it has not stopped, and says so
            stopped = waited if waited is not None else status.status not in ACTIVE
            return Waited(**status.model_dump(), stopped=stopped)


def _add_resume_tools(server: MCPServer, service: DebateService) -> None:
    """``answer_questions`` and ``submit_turn``: what a suspended debate waits for, and it goes on."""

    @server.tool()
    async def answer_questions(
        debate_id: str,
        answers: Annotated[dict[str, str], Field(description='Answers by question id, e.g. {"q1": "EU only"}.')],
    ) -> Status:
        """Answer a suspended debate's clarifying questions; the debate goes on in the background."""
        with reported():
            state = service.load(debate_id)
            job = service.jobs.get(debate_id)
            if job is not None and job.running:
                raise DebateBusyError(f"debate {debate_id} is running; it asks for answers only when it stops")
            if state.status != "suspended":
                raise DebateStateError(f"debate {debate_id} is {state.status}: it is not waiting for answers")
            pending = [q.id for q in state.pending_questions()]
            unknown = sorted(set(answers) - set(pending))
            if unknown:
                raise DebateStateError(
                    f"no pending question {', '.join(unknown)} in debate {debate_id} (pending: {', '.join(pending)})"
                )
            await service.jobs.resume(debate_id, lambda: resumed_events(service.debates, debate_id, answers))
            return service.status(debate_id)

    @server.tool()
    async def submit_turn(
        debate_id: str,
        text: Annotated[str, Field(description="The turn: what the seat says, as the person wrote it.")],
        key: Annotated[
            str | None,
            Field(
                description="The turn's key (debate_status lists the pending turns with their prompts), or the "
                "seat's id; default: the turn waiting first."
            ),
        ] = None,
    ) -> Status:
        """Write the turn of a seat a person plays (provider human) that a suspended debate waits for; the
        debate goes on in the background."""
        with reported():
            state = service.load(debate_id)
            job = service.jobs.get(debate_id)
            if job is not None and job.running:
                raise DebateBusyError(f"debate {debate_id} is running; it asks for a turn only when it stops")
            turns = turn_texts(state, [(key, text)])
            await service.jobs.resume(debate_id, lambda: resumed_events(service.debates, debate_id, None, turns))
            return service.status(debate_id)


def _add_outcome_tools(server: MCPServer, service: DebateService) -> None:
    """``get_result``, ``cancel_debate`` and ``list_debates``: a debate's end, and the store's debates."""

    @server.tool()
    async def get_result(debate_id: str) -> Result:
        """A completed debate's outcome: the solution, the judge's verdict, the vote tally and the usage."""
        with reported():
            result = DebateResult(service.load(debate_id))
            if result.status != "completed":
                raise DebateStateError(_not_finished(service.status(debate_id)))
            return result_of(result)

    @server.tool()
    async def cancel_debate(debate_id: str) -> Cancelled:
        """Stop a debate this server is running; it is saved as interrupted (resumable with dialectic resume)."""
        with reported():
            service.load(debate_id)
            cancelled = await service.jobs.cancel(debate_id)
            return Cancelled(debate_id=debate_id, status=service.load(debate_id).status, cancelled=cancelled)

    @server.tool()
    async def list_debates(
        status: Annotated[DebateStatus | None, Field(description="Only the debates with this status.")] = None,
        limit: Annotated[int, Field(ge=1, le=200, description="At most this many, newest first.")] = 20,
    ) -> Listing:
        """The saved debates, newest first."""
        with reported():
            return Listing(debates=[listed(entry) for entry in service.debates.list(status=status, limit=limit)])


def _add_report_resource(server: MCPServer, service: DebateService) -> None:
    """The resource ``dialectic://debates/{debate_id}/report``: a debate's Markdown report."""

    @server.resource(REPORT_URI, name="debate-report", mime_type="text/markdown")
    async def debate_report(debate_id: str) -> str:
        """A debate's Markdown report, as dialectic report writes it."""
        try:
            return DebateResult(service.load(debate_id)).report()
        except DebateNotFoundError as exc:
            raise ResourceNotFoundError(redact(exc.message)) from None
        except DialecticError as exc:
            raise ResourceError(redact(exc.message)) from None


def _not_finished(status: Status) -> str:
    where = f"debate {status.debate_id} is {status.status}"
    if status.running_here:
        return f"{where} ({status.progress.message}): call wait_for_debate, then get_result"
    if status.status == "suspended" and status.pending_turns:
        return f"{where}: it waits for {len(status.pending_turns)} human turn(s) (submit_turn)"
    if status.status == "suspended":
        return f"{where}: it waits for answers to {len(status.pending_questions)} question(s) (answer_questions)"
    if status.error:
        return f"{where}: {status.error}"
    return f"{where} and has no result (resume it with: dialectic resume {status.debate_id})"
