"""Debate participants: role-based agents and the judge.

A participant turns "what it should do now" plus the debate's text into one LLM
request, and hands back the completion. It decides nothing about scheduling,
persistence or failure handling — the engine does.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from jinja2 import Environment, StrictUndefined, TemplateError

from dialectic.agents.outputs import QuestionList, SynthesisOutput
from dialectic.agents.squeeze import quote, quotes_cut, reply_tokens
from dialectic.agents.templates import JUDGE_ROLE, builtin_role_prompt, phase_template, render
from dialectic.agents.tool_loop import (
    AgentReply,
    StructuredReply,
    ToolAccess,
    complete_structured_with_tools,
    complete_with_tools,
)
from dialectic.core.config import AgentConfig, SummarizationConfig
from dialectic.core.domain import ClarificationItem, Contribution, Participant, PromptSource
from dialectic.core.files import PROMPT_FILE, decode_text, read_user_bytes
from dialectic.llm.base import Completion, CompletionRequest, Message
from dialectic.llm.client import WORDS_PER_TOKEN, LLMClient, RetryHook, StructuredResult

ROLE_TITLES = {
    "architect": "System Architect",
    "performance": "Performance Engineer",
    "security": "Security Specialist",
    "testing": "Testing Specialist",
    "kiss": "Simplicity Advocate",
    "datamodeling": "Data Modeling Specialist",
    "generalist": "Generalist",
}

PROPOSAL_WORDS = 300
CRITIQUE_WORDS = 200
REPLY_SHARE = 0.75
"""Share of a turn's token limit its word budget fills (measured on the embedded 0.5B model: asked
for 120 words, complete replies ran 100–175 tokens, about 75–130 words)."""
LOCAL_REPLY_SHARE = 0.3
"""The same share for an agent on the embedded models, which write a design at their own length
whatever words they are asked for: in ``make demo`` (2026-12-05), asked for 94 words within 320
tokens, both proposals ran past the limit and on through a continuation (about 250 words each), while
the critiques and refinements that ended on their own ran 87–345 tokens. At 0.3 a 512-token turn asks
for 113 words and holds the 0.5B model's usual 250–350 tokens."""

_USER_TEMPLATES = Environment(undefined=StrictUndefined, keep_trailing_newline=True, trim_blocks=True)


@dataclass(frozen=True)
class PromptFile:
    """A prompt the user supplied, or ``None`` text for the built-in one."""

    text: str | None
    source: PromptSource


def read_prompt_file(path: str | None, config_dir: Path, warnings: list[str], what: str) -> PromptFile:
    """Read a configured prompt file.

    A missing, non-UTF-8 or empty file is a warning and the built-in prompt (as in the seed);
    one that must not be read at all (a device, FIFO, directory, system file, or larger than
    the prompt-file cap) is a ``ConfigError``.
    """
    if not path:
        return PromptFile(None, PromptSource())
    resolved = (config_dir / path).expanduser().resolve()
    if not resolved.exists():
        warnings.append(f"{what}: cannot read {resolved} (No such file or directory); using the built-in prompt")
        return PromptFile(None, PromptSource())
    text = decode_text(read_user_bytes(resolved, replace(PROMPT_FILE, label=what)))
    if text is None:
        warnings.append(f"{what}: {resolved} is not UTF-8 text; using the built-in prompt")
        return PromptFile(None, PromptSource())
    if not text.strip():
        warnings.append(f"{what}: {resolved} is empty; using the built-in prompt")
        return PromptFile(None, PromptSource())
    return PromptFile(text, PromptSource(kind="file", path=str(resolved)))


def render_user_prompt(custom: PromptFile, builtin: str, warnings: list[str], **variables: Any) -> str:
    """Render a user-supplied template (Jinja2, same variables as the built-in) or the built-in one."""
    if custom.text is not None:
        try:
            return _USER_TEMPLATES.from_string(custom.text).render(**variables)
        except TemplateError as exc:
            warnings.append(f"prompt {custom.source.path} failed to render ({exc}); using the built-in prompt")
    return render(builtin, **variables)


@dataclass
class Speaker:
    """What agents and the judge share: a configured identity, a system prompt and a client."""

    config: AgentConfig
    client: LLMClient
    system_prompt: str
    system_source: PromptSource
    problem_kind: str = field(default="design", kw_only=True)
    """``design`` or ``reasoning`` (see :mod:`dialectic.engine.problem_kind`): picks the phase templates."""

    def __post_init__(self) -> None:
        self.stance: str = ""
        """Position and persona lines appended to the system prompt (see :meth:`set_stance`)."""
        self.set_stance(self.config.position, self.config.persona)

    @property
    def id(self) -> str:
        return self.config.id

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def role(self) -> str:
        return self.config.role

    def participant(self) -> Participant:
        c = self.config
        return Participant(
            id=c.id,
            name=c.name,
            role=c.role,
            model=c.model,
            provider=c.provider,
            temperature=c.temperature,
            position=c.position,
            persona=c.persona,
        )

    def set_stance(self, position: str | None, persona: str | None) -> None:
        """The position and persona the speaker argues with (configured, or assigned by the judge)."""
        self.stance = render("stance.md.j2", position=position, persona=persona).strip()

    async def contribute(
        self, request: CompletionRequest, tools: ToolAccess | None, on_retry: RetryHook | None
    ) -> AgentReply:
        """One of the speaker's own contributions: with ``tools``, through the bounded tool loop."""
        if tools is None:
            return AgentReply(await self.client.complete(request, on_retry=on_retry))
        return await complete_with_tools(self.client, request, tools, on_retry=on_retry)

    def request(self, user: str, tag: str, *, max_tokens: int | None = None) -> CompletionRequest:
        timeout = self.config.timeout / 1000 if self.config.timeout else None
        system = f"{self.system_prompt}\n\n{self.stance}" if self.stance else self.system_prompt
        return CompletionRequest(
            messages=(Message("system", system), Message("user", user)),
            model=self.config.model,
            temperature=self.config.temperature,
            max_tokens=reply_tokens(max_tokens or self.config.max_tokens),
            timeout_s=timeout,
            tag=f"{tag}:{self.role}",
        )


@dataclass
class DebateAgent(Speaker):
    summary_prompt: PromptFile
    clarification_prompt: PromptFile
    summarization: SummarizationConfig

    @property
    def role_title(self) -> str:
        """How the prompts address the agent: its name as configured (a "Security Engineer" of role
        ``security`` is the Security Engineer, not the role's built-in title)."""
        return self.name

    def word_limit(self, usual: int) -> int:
        """Words to ask for: ``usual``, or less when ``maxTokens`` would cut a reply that long.

        The budget asked is :data:`REPLY_SHARE` of what the token limit holds at
        :data:`~dialectic.llm.client.WORDS_PER_TOKEN`: small models write past the number of words
        they are given, and the margin lets their reply end before the limit cuts it
        (200 tokens: 111 words; on the embedded models :data:`LOCAL_REPLY_SHARE`).
        """
        limit = reply_tokens(self.config.max_tokens)  # lowered while the prompt is squeezed into its window
        if limit is None:
            return usual
        share = LOCAL_REPLY_SHARE if self.config.provider == "local" else REPLY_SHARE
        return max(20, min(usual, int(limit * WORDS_PER_TOKEN * share)))

    async def propose(
        self,
        *,
        problem: str,
        context: str,
        clarifications: str,
        history: str,
        history_is_summary: bool,
        memories: str = "",
        tools: ToolAccess | None = None,
        on_retry: RetryHook | None = None,
    ) -> AgentReply:
        """A proposal; ``memories``: the past debates' section of a round-1 prompt (``debate.memory: on``)."""
        user = render(
            phase_template("propose", self.problem_kind),
            role_name=self.role_title,
            problem=problem,
            context=context,
            clarifications=clarifications,
            memories=memories,
            history=history,
            history_is_summary=history_is_summary,
            word_limit=self.word_limit(PROPOSAL_WORDS),
            **files_variables(tools),
        )
        return await self.contribute(self.request(user, "proposal"), tools, on_retry)

    async def critique(
        self,
        *,
        problem: str,
        clarifications: str,
        history: str,
        history_is_summary: bool,
        target: DebateAgent,
        proposal: Contribution,
        on_retry: RetryHook | None = None,
    ) -> Completion:
        user = render(
            phase_template("critique", self.problem_kind),
            role_name=self.role_title,
            problem=problem,
            clarifications=clarifications,
            history=history,
            history_is_summary=history_is_summary,
            target_name=target.name,
            target_role=target.role,
            proposal=quote(proposal.content),
            quotes_cut=quotes_cut(),
            word_limit=self.word_limit(CRITIQUE_WORDS),
        )
        return await self.client.complete(self.request(user, "critique"), on_retry=on_retry)

    async def refine(
        self,
        *,
        problem: str,
        clarifications: str,
        history: str,
        history_is_summary: bool,
        original: Contribution,
        critiques: list[dict[str, str]],
        tools: ToolAccess | None = None,
        on_retry: RetryHook | None = None,
    ) -> AgentReply:
        user = render(
            phase_template("refine", self.problem_kind),
            role_name=self.role_title,
            problem=problem,
            clarifications=clarifications,
            history=history,
            history_is_summary=history_is_summary,
            original=original.content,
            critiques=[{**c, "content": quote(c["content"])} for c in critiques],
            quotes_cut=quotes_cut() and bool(critiques),
            word_limit=self.word_limit(PROPOSAL_WORDS),
            **files_variables(tools),
        )
        return await self.contribute(self.request(user, "refinement"), tools, on_retry)

    async def summarize(
        self,
        *,
        problem: str,
        history: str,
        warnings: list[str],
        previous: str = "",
        on_retry: RetryHook | None = None,
    ) -> Completion:
        """Summarize ``history``; with ``previous`` (the agent's last summary), ``history`` is only the rounds
        since it, and the reply updates it: each summary reads what is new, not the whole debate again."""
        user = render_user_prompt(
            self.summary_prompt,
            "summarize.md.j2",
            warnings,
            role_name=self.role_title,
            problem=problem,
            history=history,
            previous=previous,
            max_length=self.summarization.max_length,
        )
        return await self.client.complete(self.request(user, "summary"), on_retry=on_retry)

    async def ask_questions(
        self,
        *,
        problem: str,
        context: str,
        existing: list[ClarificationItem],
        max_questions: int,
        warnings: list[str],
        on_retry: RetryHook | None = None,
    ) -> StructuredResult[QuestionList]:
        asked = [{"id": i.id, "question": i.question, "answer": i.answer or ""} for i in existing]
        user = render_user_prompt(
            self.clarification_prompt,
            "clarify.md.j2",
            warnings,
            role_name=self.role_title,
            problem=problem,
            context=context,
            max_questions=max_questions,
            existing=asked,
        )
        return await self.client.complete_structured(self.request(user, "clarify"), QuestionList, on_retry=on_retry)


@dataclass
class Judge(Speaker):
    summary_prompt: PromptFile
    summarization: SummarizationConfig

    def synthesis_instructions(self) -> str:
        """What the judge is told when it writes the solution, without the problem and the debate: its
        system prompt and the synthesis template's own words (a judge that echoes them wrote nothing)."""
        template = render(
            phase_template("judge_synthesize", self.problem_kind),
            problem="",
            clarifications="",
            debate="",
            debate_is_summary=False,
        )
        return f"{self.system_prompt}\n{template}"

    async def synthesize(
        self,
        *,
        problem: str,
        clarifications: str,
        debate: str,
        debate_is_summary: bool,
        tools: ToolAccess | None = None,
        on_retry: RetryHook | None = None,
    ) -> StructuredReply[SynthesisOutput]:
        """The solution; with ``tools`` (``judgeTools``) the judge reads the context directory first."""
        user = render(
            phase_template("judge_synthesize", self.problem_kind),
            problem=problem,
            clarifications=clarifications,
            debate=debate,
            debate_is_summary=debate_is_summary,
            **files_variables(tools),
        )
        request = self.request(user, "synthesis")
        if tools is not None:
            return await complete_structured_with_tools(self.client, request, SynthesisOutput, tools, on_retry=on_retry)
        return StructuredReply(await self.client.complete_structured(request, SynthesisOutput, on_retry=on_retry))

    async def summarize(
        self, *, problem: str, debate: str, warnings: list[str], on_retry: RetryHook | None = None
    ) -> Completion:
        user = render_user_prompt(
            self.summary_prompt,
            "judge_summarize.md.j2",
            warnings,
            problem=problem,
            debate=debate,
            max_length=self.summarization.max_length,
        )
        return await self.client.complete(self.request(user, "judge-summary"), on_retry=on_retry)


def files_variables(tools: ToolAccess | None) -> dict[str, Any]:
    """The template variables of the "user's files" section (``_files.md.j2``): empty without tools."""
    if tools is None:
        return {}
    return {"files": tools.overview(), "max_tool_calls": tools.max_calls}


def system_prompt_for(config: AgentConfig, custom: PromptFile, *, judge: bool, kind: str = "design") -> str:
    """The custom system prompt if one was given, else the role's built-in one (generalist for unknown roles).

    Unknown roles are reported when the configuration is loaded (``config_loader``), not here.
    """
    if custom.text is not None:
        return custom.text
    return builtin_role_prompt(JUDGE_ROLE if judge else config.role, kind)
