"""The ``local`` provider: a GGUF model run in process through llama-cpp-python.

One model instance per process serves every agent that names it: it is loaded on the first
call (joining and verifying its file first, see :mod:`dialectic.llm.local_models`) and then
kept. llama.cpp is not thread-safe, so calls to one instance are serialised: an
``asyncio.Lock`` queues callers without tying up threads, and the work runs in a worker
thread (``asyncio.to_thread``) under a ``threading.Lock``, so the event loop keeps serving
other providers and a call whose awaiting task was cancelled ends before the next one starts.

Prompt evaluation dominates a debate's time on a CPU, so prefixes are reused: llama-cpp-python
keeps the previous call's tokens in the KV cache and evaluates only from the first token that
differs, and :class:`PrefixSnapshots` keeps copies of recent calls' KV cells so agents taking
turns each get their own prefix back (figures: ``benchmarks/local_model.py``).

Cancellation and the timeout stop generation promptly through llama.cpp's abort callback,
polled during every decode; an aborted decode leaves the model state consistent (the next
call drops whatever lies past the last completed decode). The timeout (the request's
``timeout_s``, else :data:`~dialectic.llm.timeouts.DEFAULT_CALL_TIMEOUT_S`) measures
inactivity, not length: every completed decode — a batch of the prompt, or one generated
token — restarts its clock, so a slow model that keeps producing tokens is never stopped,
and one that stops producing is stopped that long after its last token.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import logging
import os
import re
import sys
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from dialectic.core import environment
from dialectic.core.domain import Usage
from dialectic.core.errors import ConfigError, ContextWindowExceeded, InvalidResponse, ProviderError, ProviderTimeout
from dialectic.core.json_values import JsonObject
from dialectic.llm.base import (
    FINISH_LENGTH,
    FINISH_STOP,
    FINISH_TOOL_CALLS,
    Completion,
    CompletionRequest,
    Delta,
    ToolCall,
)
from dialectic.llm.json_text import parse_json_text
from dialectic.llm.local_models import (
    DEFAULT_MODEL,
    LLAMA_CPP_REQUIREMENT,
    ModelSpec,
    default_cache_dir,
    gguf_context_length,
    prepare_model,
    resolve_model,
)
from dialectic.llm.local_tools import (
    ANSWER_GRAMMAR,
    TOOL_STOPS,
    call_grammar,
    chat_messages,
    must_call,
    parse_reply,
    repeats_a_call,
)
from dialectic.llm.timeouts import DEFAULT_CALL_TIMEOUT_S

if TYPE_CHECKING:
    from llama_cpp import Llama

T = TypeVar("T")
Chat = list[dict[str, str]]

PROVIDER = "local"
N_CTX_ENV = environment.LOCAL_N_CTX
MAX_DEFAULT_N_CTX = 8192
"""Context used when none is asked for: the model's trained context, capped to bound memory."""

SAMPLING: JsonObject = {"repeat_penalty": 1.1, "top_k": 20, "top_p": 0.8}
"""Qwen2.5's recommended sampling. The repetition penalty matters most: without it small models
fall into loops (a judge repeating one sentence until the token limit, its JSON never closed)."""

CHAT_TOKENS_PER_MESSAGE = 5
"""Tokens Qwen2.5's chat template puts around a message (``<|im_start|>role\\n`` … ``<|im_end|>\\n``)."""
CHAT_TOKENS_PER_REPLY = 3
"""Tokens that open the assistant's reply (``<|im_start|>assistant\\n``)."""

_LLAMA_LOG = logging.getLogger("llama-cpp-python")
_TOO_LONG = re.compile(r"Requested tokens \((\d+)\) exceed context window of (\d+)")


class _Stopped(Exception):
    """Generation was stopped on purpose (cancelled, or past its deadline)."""


class GenerationJob:
    """One call's stop conditions; polled from llama.cpp's compute thread by the abort callback.

    The timeout is one of inactivity: :meth:`observe` is shown the model's token count (prompt
    tokens evaluated plus tokens generated) and restarts the clock whenever it has changed.

    Time the process spent stopped (Ctrl-Z then ``fg``, a SIGSTOP) is not inactivity. While a
    decode runs, llama.cpp polls the abort callback many times a second, so a gap of more than
    :attr:`STOPPED_GAP_S` between two observations means this process was not running; that
    gap is taken off the clock instead of failing the call the moment the process continues.
    """

    STOPPED_GAP_S = 10.0

    def __init__(self, timeout_s: float | None, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.timeout_s = timeout_s
        self.cancelled = threading.Event()
        self._clock = clock
        self._last_progress: float | None = None
        self._last_observed: float | None = None
        self._tokens = -1

    def start(self, tokens: int) -> None:
        """Start the clock (after loading, so a first call's load time does not count)."""
        self._tokens = tokens
        self._last_progress = self._last_observed = self._clock()

    def observe(self, tokens: int) -> None:
        """The model holds ``tokens`` tokens now; a change is progress."""
        now = self._clock()
        if self._last_observed is not None and self._last_progress is not None:
            gap = now - self._last_observed
            if gap > self.STOPPED_GAP_S:
                self._last_progress += gap
        self._last_observed = now
        if tokens != self._tokens:
            self._tokens = tokens
            self._last_progress = now

    @property
    def timed_out(self) -> bool:
        if self.timeout_s is None or self._last_progress is None:
            return False
        return self._clock() - self._last_progress > self.timeout_s

    def should_stop(self) -> bool:
        return self.cancelled.is_set() or self.timed_out


def job_for(request: CompletionRequest) -> GenerationJob:
    """The request's job: its ``timeout_s``, else the default per-call timeout."""
    return GenerationJob(request.timeout_s or DEFAULT_CALL_TIMEOUT_S)


def _context_size(path: Path, requested: int | None) -> int:
    if requested is not None:
        return requested
    raw = environment.local_n_ctx()
    if raw:
        if not raw.isdigit() or int(raw) < 256:
            raise ConfigError(f"{N_CTX_ENV} must be a whole number of tokens, at least 256 (got '{raw}')")
        return int(raw)
    return min(gguf_context_length(path) or MAX_DEFAULT_N_CTX, MAX_DEFAULT_N_CTX)


def default_threads() -> int:
    """The cores this process may run on (affinity-aware where the OS says)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


def import_llama() -> type[Llama]:
    """llama-cpp-python's ``Llama``, with OpenMP told to sleep rather than spin when idle.

    llama.cpp's OpenMP workers busy-wait by default; with one thread per core, any other
    process on the machine then stalls every decode (measured on 2 cores with one busy:
    median 4.9 tok/s, worst 0.5, against 14.4 with passive waiting). OpenMP reads the
    setting when the library loads, so it is set before the first import unless already set.
    """
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    try:
        from llama_cpp import Llama
    except ImportError as error:
        raise ConfigError(
            "the 'local' provider needs llama-cpp-python, which is not installed. "
            f"Fix: {sys.executable} -m pip install {LLAMA_CPP_REQUIREMENT} (it compiles llama.cpp: a few minutes)"
        ) from error
    return Llama


def _common(a: str, b: str) -> int:
    return len(os.path.commonprefix([a, b]))


class PrefixSnapshots:
    """Copies of recent calls' KV cells, restored when a new prompt shares more with one of them.

    Only sequence 0's cells are copied (``llama_state_seq_*``), not the logits that
    ``LlamaRAMCache`` copies too (311 MB per snapshot with a 150k vocabulary), so a snapshot
    costs about 12 KB a token for the 0.5B model and milliseconds to take. The snapshot is
    chosen by the longest common prefix of message text; correctness never depends on that
    choice, since llama-cpp-python still compares tokens and evaluates from the first difference.
    """

    MARGIN_CHARS = 200
    """A snapshot must share this much more text than what is loaded to be worth restoring."""

    def __init__(self, capacity_bytes: int = 256 << 20) -> None:
        self.capacity_bytes = capacity_bytes
        # llama-cpp-python's LlamaState is unannotated: Any at that third-party edge
        self._entries: OrderedDict[str, tuple[Any, bytes]] = OrderedDict()
        self._loaded = ""

    @staticmethod
    def key(messages: Chat) -> str:
        return "".join(f"\x00{m['role']}\x01{m['content']}" for m in messages)

    def restore(self, llama: Llama, key: str) -> bool:
        """Load the best snapshot for ``key`` if it beats what the KV cache holds; True if loaded."""
        import llama_cpp

        best = max(self._entries, key=lambda k: _common(k, key), default=None)
        if best is None or _common(best, key) <= _common(self._loaded, key) + self.MARGIN_CHARS:
            return False
        tokens, data = self._entries[best]
        self._entries.move_to_end(best)
        buffer = (ctypes.c_uint8 * len(data)).from_buffer_copy(data)
        if llama_cpp.llama_state_seq_set_data(llama.ctx, buffer, len(data), 0) != len(data):
            cast(Any, llama).reset()  # llama-cpp-python leaves reset() unannotated
            self._loaded = ""
            return False
        llama.input_ids[: len(tokens)] = tokens
        llama.n_tokens = len(tokens)
        llama._requires_eval = True  # logits are not restored: evaluate before sampling
        self._loaded = best
        return True

    def save(self, llama: Llama, key: str) -> None:
        import llama_cpp

        size = llama_cpp.llama_state_seq_get_size(llama.ctx, 0)
        buffer = (ctypes.c_uint8 * size)()
        written = llama_cpp.llama_state_seq_get_data(llama.ctx, buffer, size, 0)
        self._entries[key] = (llama.input_ids[: llama.n_tokens].copy(), bytes(buffer)[:written])
        self._entries.move_to_end(key)
        while len(self._entries) > 1 and sum(len(d) for _, d in self._entries.values()) > self.capacity_bytes:
            self._entries.popitem(last=False)
        self._loaded = key

    def forget_loaded(self) -> None:
        """The KV cache holds something unknown (a call failed part-way)."""
        self._loaded = ""


class SharedModel:
    """One model file, loaded at most once per process and used by one call at a time."""

    def __init__(self, source: ModelSpec | Path, *, n_ctx: int | None, n_threads: int | None) -> None:
        self.source = source
        self.label = source.name if isinstance(source, ModelSpec) else str(source)
        self._requested_ctx = n_ctx
        self.n_threads = n_threads or default_threads()
        self.n_ctx_train: int | None = None
        self.snapshots = PrefixSnapshots()
        self._llama: Llama | None = None
        self._thread_lock = threading.Lock()
        self._queues: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = weakref.WeakKeyDictionary()
        self._job: GenerationJob | None = None
        self._abort_callback: Any = None  # kept alive here: llama.cpp holds a raw pointer to it

    def queue(self) -> asyncio.Lock:
        """This event loop's lock for the model (an ``asyncio.Lock`` belongs to one loop)."""
        loop = asyncio.get_running_loop()
        if loop not in self._queues:
            self._queues[loop] = asyncio.Lock()
        return self._queues[loop]

    def model_path(self) -> Path:
        if isinstance(self.source, ModelSpec):
            return prepare_model(self.source)
        if not self.source.is_file():
            raise ConfigError(f"local model file not found: {self.source}")
        return self.source

    def window(self) -> int | None:
        """The ``n_ctx`` each call gets: the loaded model's, else what loading it will choose.

        ``None`` when that depends on a model file that is not prepared yet (it would have to be
        joined from its parts first) and no size was asked for.
        """
        llama = self._llama
        if llama is not None:
            return int(llama.n_ctx())
        path = self._path_if_ready()
        if path is None:
            return self._requested_ctx
        return _context_size(path, self._requested_ctx)

    def _path_if_ready(self) -> Path | None:
        """The model file when it is on disk already (never joins or downloads it)."""
        if isinstance(self.source, ModelSpec):
            cached = default_cache_dir() / "models" / self.source.filename
            return cached if cached.is_file() else None
        return self.source if self.source.is_file() else None

    def count_tokens(self, messages: Chat) -> int | None:
        """The tokens of ``messages`` by the model's tokenizer, with the chat template's few per message;
        ``None`` until the model is loaded (the tokenizer comes with it).

        Tokenizing reads only the vocabulary, so it is safe while another thread generates.
        """
        llama = self._llama
        if llama is None:
            return None
        tokens = sum(len(llama.tokenize(m["content"].encode("utf-8"), add_bos=False, special=True)) for m in messages)
        return tokens + CHAT_TOKENS_PER_MESSAGE * len(messages) + CHAT_TOKENS_PER_REPLY

    def _load(self) -> Llama:
        llama_class = import_llama()
        import llama_cpp

        path = self.model_path()
        self.n_ctx_train = gguf_context_length(path)
        try:
            llama = llama_class(
                model_path=str(path),
                n_ctx=_context_size(path, self._requested_ctx),
                n_threads=self.n_threads,
                n_threads_batch=self.n_threads,
                verbose=False,
            )
        except (ValueError, RuntimeError) as error:
            raise ConfigError(f"cannot load local model {self.label} from {path}: {error}") from error

        def abort(_data: ctypes.c_void_p) -> bool:
            job = self._job
            if job is None:
                return False
            job.observe(llama.n_tokens)
            if not job.should_stop():
                return False
            _LLAMA_LOG.setLevel(logging.CRITICAL)  # llama.cpp reports a deliberate abort as an error
            return True

        self._abort_callback = llama_cpp.ggml_abort_callback(abort)
        llama_cpp.llama_set_abort_callback(llama.ctx, self._abort_callback, None)
        return llama

    def run(self, job: GenerationJob, messages: Chat, work: Callable[[Llama], tuple[T, str]]) -> T:
        """In this worker thread, run ``work`` (answering ``messages``; it returns its result and
        the reply text), loading the model first if needed."""
        with self._thread_lock:
            if job.should_stop():
                raise _Stopped()
            if self._llama is None:
                self._llama = self._load()
            llama = self._llama
            key = PrefixSnapshots.key(messages)
            self.snapshots.restore(llama, key)
            self._job = job
            job.start(llama.n_tokens)
            log_level = _LLAMA_LOG.level
            try:
                result, reply = work(llama)
            except BaseException as error:
                self.snapshots.forget_loaded()
                if isinstance(error, RuntimeError):
                    if job.should_stop():
                        raise _Stopped() from error
                    raise ProviderError(
                        f"{PROVIDER}: llama.cpp failed on {self.label}: {error}", provider=PROVIDER
                    ) from error
                if isinstance(error, ValueError):
                    raise self._translate_value_error(error) from error
                raise
            finally:
                self._job = None
                _LLAMA_LOG.setLevel(log_level)
            self.snapshots.save(llama, key + PrefixSnapshots.key([{"role": "assistant", "content": reply}]))
            return result

    def _translate_value_error(self, error: ValueError) -> ProviderError:
        match = _TOO_LONG.search(str(error))
        if match is None:
            return InvalidResponse(f"{PROVIDER}: {self.label} could not answer: {error}", provider=PROVIDER)
        prompt, window = int(match.group(1)), int(match.group(2))
        larger = (
            f"set {N_CTX_ENV} to a larger value (this model was trained with {self.n_ctx_train} tokens)"
            if self.n_ctx_train and self.n_ctx_train > window
            else "use a model with a larger context"
        )
        return ContextWindowExceeded(
            f"{PROVIDER}: the prompt ({prompt} tokens) does not fit the context window of {self.label} "
            f"({window} tokens). Summarize earlier: lower debate.summarization.threshold (and "
            f"maxLength) in the config, or {larger}.",
            provider=PROVIDER,
            window=window,
            prompt_tokens=prompt,
        )


_MODELS: dict[str, SharedModel] = {}
_MODELS_LOCK = threading.Lock()


def shared_model(name_or_path: str, *, n_ctx: int | None = None, n_threads: int | None = None) -> SharedModel:
    """The process-wide instance for a model; the settings of its first user apply."""
    source = resolve_model(name_or_path)
    key = source.name if isinstance(source, ModelSpec) else str(source.resolve())
    with _MODELS_LOCK:
        if key not in _MODELS:
            _MODELS[key] = SharedModel(source, n_ctx=n_ctx, n_threads=n_threads)
        return _MODELS[key]


def _chat(request: CompletionRequest) -> Chat:
    """The request's messages for llama.cpp; with tools or tool turns, in Qwen2.5's tool format."""
    if request.tools or any(m.role == "tool" or m.tool_calls for m in request.messages):
        return chat_messages(request.messages, request.tools)
    return [{"role": m.role, "content": m.content} for m in request.messages]


def _options(request: CompletionRequest) -> JsonObject:
    options: JsonObject = {"messages": _chat(request), **SAMPLING}
    if request.max_tokens is not None:
        options["max_tokens"] = request.max_tokens
    if request.temperature is not None:
        options["temperature"] = request.temperature
    if request.json_schema is not None:
        options["response_format"] = {"type": "json_object", "schema": request.json_schema.schema}
    elif request.tools:
        options["stop"] = list(TOOL_STOPS)
    return options


def _finish(reason: object) -> str:
    return FINISH_LENGTH if reason == "length" else FINISH_STOP


def _parse(response: JsonObject, label: str) -> tuple[str, str, Usage]:
    """Text, finish reason and usage of a chat completion."""
    try:
        choice, usage = response["choices"][0], response["usage"]
        return (
            choice["message"]["content"] or "",
            _finish(choice.get("finish_reason")),
            Usage(
                input_tokens=usage["prompt_tokens"],
                output_tokens=usage["completion_tokens"],
                total_tokens=usage["total_tokens"],
            ),
        )
    except (KeyError, IndexError, TypeError) as error:
        raise InvalidResponse(f"{PROVIDER}: unexpected reply shape from {label}", provider=PROVIDER) from error


class LocalProvider:
    """An :class:`~dialectic.llm.base.LLMProvider` running a local GGUF model in process.

    ``model`` is a catalogue name (``qwen2.5-0.5b``, ``qwen2.5-1.5b``) or a path to a
    ``.gguf`` file. A request naming another model is served by that model's shared
    instance, so one provider can serve agents configured with different local models.
    """

    name = PROVIDER

    def __init__(self, model: str = DEFAULT_MODEL, *, n_ctx: int | None = None, n_threads: int | None = None) -> None:
        self.model = model
        self._n_ctx = n_ctx
        self._n_threads = n_threads
        self._shared = shared_model(model, n_ctx=n_ctx, n_threads=n_threads)

    def _model_for(self, request: CompletionRequest) -> SharedModel:
        return self._shared_for(request.model)

    def _shared_for(self, model: str) -> SharedModel:
        if not model or model == self.model:
            return self._shared
        return shared_model(model, n_ctx=self._n_ctx, n_threads=self._n_threads)

    async def _run(
        self, shared: SharedModel, job: GenerationJob, messages: Chat, work: Callable[[Llama], tuple[T, str]]
    ) -> T:
        async with shared.queue():
            try:
                return await asyncio.to_thread(shared.run, job, messages, work)
            except asyncio.CancelledError:
                job.cancelled.set()
                raise
            except _Stopped:
                if not job.timed_out:
                    raise asyncio.CancelledError() from None
                raise ProviderTimeout(
                    f"{PROVIDER}: {shared.label} made no progress for {job.timeout_s:g} s (the agent's per-call "
                    "`timeout`, in milliseconds, sets how long to wait)",
                    provider=PROVIDER,
                ) from None

    async def context_window(self, model: str) -> int | None:
        """The context window (``n_ctx``) a request to ``model`` gets (see :meth:`SharedModel.window`)."""
        return await asyncio.to_thread(self._shared_for(model).window)

    def count_tokens(self, request: CompletionRequest) -> int | None:
        """The request's prompt tokens by its model's tokenizer; ``None`` before the model is loaded."""
        return self._model_for(request).count_tokens(_chat(request))

    supports_tools = True
    """Tools in Qwen2.5's own format (:mod:`dialectic.llm.local_tools`). These small models, left
    free, answer unread or ask for a result they already have, so the first step of a tool loop
    is held by a grammar to one well-formed call, and a later call that repeats one already made
    is asked again with calls ruled out (measured: ``benchmarks/local_tool_calls.py``)."""

    async def complete(self, request: CompletionRequest) -> Completion:
        shared = self._model_for(request)
        options = _options(request)
        with_tools = bool(request.tools) and request.json_schema is None
        names = [tool.name for tool in request.tools]

        def generate(llama: Llama, grammar: str | None) -> tuple[str, str, Usage]:
            extra: JsonObject = {}
            if grammar is not None:
                from llama_cpp.llama_grammar import LlamaGrammar

                extra["grammar"] = LlamaGrammar.from_string(grammar, verbose=False)
            return _parse(cast(JsonObject, llama.create_chat_completion(**options, **extra)), shared.label)

        def work(llama: Llama) -> tuple[tuple[str, str, Usage, float, tuple[ToolCall, ...]], str]:
            started = time.perf_counter()
            forced = with_tools and must_call(request.messages, request.tools)
            raw, finish, usage = generate(llama, call_grammar(request.tools) if forced else None)
            text, calls = parse_reply(raw, names) if with_tools else (raw, ())
            if calls and not forced and repeats_a_call(request.messages, calls):
                raw, finish, again = generate(llama, ANSWER_GRAMMAR)
                usage = usage + again
                text, calls = raw.strip(), ()
            if calls and finish != FINISH_LENGTH:
                finish = FINISH_TOOL_CALLS
            return (text, finish, usage, time.perf_counter() - started, calls), raw

        text, finish, usage, seconds, calls = await self._run(shared, job_for(request), options["messages"], work)
        structured = parse_json_text(text) if request.json_schema is not None and finish == FINISH_STOP else None
        return Completion(
            text=text,
            model=shared.label,
            usage=usage,
            latency_ms=int(seconds * 1000),
            finish_reason=finish,
            structured=structured,
            tool_calls=calls,
        )

    async def stream(self, request: CompletionRequest) -> AsyncIterator[Delta]:
        """Stream the reply; the final delta carries finish reason, usage and model.

        llama-cpp-python's stream carries no usage, so it is worked out afterwards: the reply's
        tokens by tokenizing its text, the prompt's as the rest of the context.
        """
        shared = self._model_for(request)
        options = _options(request)
        loop = asyncio.get_running_loop()
        pieces: asyncio.Queue[str | BaseException | Delta] = asyncio.Queue()
        job = job_for(request)

        def emit(item: str | BaseException | Delta) -> None:
            loop.call_soon_threadsafe(pieces.put_nowait, item)

        def work(llama: Llama) -> tuple[None, str]:
            texts: list[str] = []
            finish: object = None
            # the library's streamed chunks are raw JSON objects, typed loosely upstream
            chunks = cast(Generator[JsonObject, None, None], llama.create_chat_completion(**options, stream=True))
            with contextlib.closing(chunks):
                for chunk in chunks:
                    job.observe(llama.n_tokens)
                    if job.should_stop():
                        raise _Stopped()
                    choice = chunk["choices"][0]
                    if content := choice["delta"].get("content"):
                        texts.append(content)
                        emit(content)
                    finish = choice.get("finish_reason") or finish
            text = "".join(texts)
            output = len(llama.tokenize(text.encode("utf-8"), add_bos=False, special=True)) if text else 0
            evaluated = output - 1 if _finish(finish) == FINISH_LENGTH else output
            prompt = max(llama.n_tokens - max(evaluated, 0), 0)
            usage = Usage(input_tokens=prompt, output_tokens=output, total_tokens=prompt + output)
            emit(Delta(finish_reason=_finish(finish), usage=usage, model=shared.label))
            return None, text

        async def produce() -> None:
            try:
                await self._run(shared, job, options["messages"], work)
            except (Exception, asyncio.CancelledError) as error:
                emit(error)

        producer = asyncio.create_task(produce())
        try:
            while True:
                item = await pieces.get()
                if isinstance(item, BaseException):
                    raise item
                if isinstance(item, Delta):
                    yield item
                    return
                yield Delta(text=item)
        finally:
            job.cancelled.set()
            await asyncio.gather(producer, return_exceptions=True)

    async def aclose(self) -> None:
        """Nothing to release per provider: the shared model lives as long as the process."""
