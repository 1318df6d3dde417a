"""An OpenAI-compatible Chat Completions server over Hugging Face transformers, for bench runs on a
GPU machine that has no llama.cpp build.

It serves the same GGUF files as ``benchmarks/llama_server.sh`` (transformers reads and dequantizes
them), answers the subset of Chat Completions that ``dialectic`` sends (``messages``,
``temperature``, ``max_tokens``, ``logprobs``, ``stream``), and batches the requests that wait
into generations on the GPU, so a bench run with a high ``--concurrency`` keeps the card busy.
Several worker processes each hold a copy of the model (one process's Python time overlaps another's
GPU work); a free worker takes every request waiting, and each reply is answered as soon as its row
finishes, not when the batch's longest reply does.

Sampling copies llama-server's default chain, so the arms see the same kind of sampler as on the
CPU server: top-k 40, then top-p 0.95 and min-p 0.05 on the untempered distribution, then the
temperature; a temperature of 0 is greedy. The log-probabilities returned are those of the raw
distribution (temperature 1), like llama-server's. ``response_format`` and ``tools`` are refused
with a 400 naming them, which makes the client fall back to asking for JSON in the prompt.

    python benchmarks/gpu/serve_hf.py --model qwen2.5-0.5b=/path/qwen2.5-0.5b.gguf [--port 8391]

Needs torch, transformers, gguf and aiohttp (none of them a dependency of dialectic).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from aiohttp import web
from transformers import AutoModelForCausalLM, AutoTokenizer, GenerationConfig, LogitsProcessor

TOP_K = 40
TOP_P = 0.95
MIN_P = 0.05
DEFAULT_MAX_TOKENS = 1024
PADDED_TOKENS = 300_000
"""The most prompt tokens, padding included, one batch prefills: long prompts go in smaller batches."""
FLUSH_EVERY = 16
"""Steps between two looks for finished rows (each look waits for the GPU)."""


@dataclass
class Job:
    """One request, from its arrival to its answer (in the server process)."""

    ident: int
    prompt: list[int]
    temperature: float
    max_tokens: int
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[Job]
    tokens: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    finish: str = "stop"


Row = tuple[int, list[int], float, int]
"""What a worker is sent of a job: its id, prompt, temperature and length limit."""


class RowSampler(LogitsProcessor):
    """Chooses every row's next token itself (so each row keeps its own temperature and length limit),
    records it with its log-probability, and hands ``generate`` scores where only that token is finite.
    Every ``FLUSH_EVERY`` steps the rows that have finished are sent back at once, so a short reply
    does not wait for the batch's longest."""

    def __init__(self, rows: list[Row], prompt_width: int, eos: list[int], device: torch.device, send: Any) -> None:
        self.rows = rows
        self.prompt_width = prompt_width
        self.eos = torch.tensor(eos, device=device)
        self.eos_set = set(eos)
        self.temps = torch.tensor([r[2] for r in rows], device=device, dtype=torch.float32)
        self.limits = torch.tensor([r[3] for r in rows], device=device)
        self.done = torch.zeros(len(rows), dtype=torch.bool, device=device)
        self.cut = torch.zeros(len(rows), dtype=torch.bool, device=device)
        self.sent = [False] * len(rows)
        self.steps: list[tuple[torch.Tensor, torch.Tensor]] = []
        self.send = send

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        step = input_ids.shape[1] - self.prompt_width
        raw = scores.float()
        values, index = raw.topk(TOP_K, dim=-1)
        probs = values.softmax(-1)
        keep = (probs.cumsum(-1) - probs) < TOP_P
        keep &= probs >= MIN_P * probs[:, :1]
        keep[:, 0] = True
        tempered = (values / self.temps.clamp(min=1e-4)[:, None]).masked_fill(~keep, float("-inf"))
        drawn = index.gather(1, torch.multinomial(tempered.softmax(-1), 1)).squeeze(1)
        chosen = torch.where(self.temps <= 0, index[:, 0], drawn)
        cut = step >= self.limits
        chosen = torch.where(cut, self.eos[0], chosen)
        logprob = raw.log_softmax(-1).gather(1, chosen[:, None]).squeeze(1)
        self.steps.append((chosen, logprob))
        self.cut |= cut & ~self.done
        self.done |= torch.isin(chosen, self.eos) | cut
        if len(self.steps) % FLUSH_EVERY == 0:
            self.flush(everything=False)
        out = torch.full_like(raw, float("-inf"))
        out.scatter_(1, chosen[:, None], 0.0)
        return out  # type: ignore[return-value]

    def flush(self, everything: bool) -> None:
        """Send the finished rows not sent yet (every row left, when ``everything``): one copy from the GPU."""
        if not self.steps:
            return
        done = self.done.tolist()
        ready = [r for r in range(len(self.rows)) if not self.sent[r] and (everything or done[r])]
        if not ready:
            return
        pick = torch.tensor(ready, device=self.done.device)
        chosen = torch.stack([s[0] for s in self.steps], 1)[pick].tolist()
        logprob = torch.stack([s[1] for s in self.steps], 1)[pick].tolist()
        cut = self.cut[pick].tolist()
        answers = []
        for n, row in enumerate(ready):
            self.sent[row] = True
            tokens: list[int] = []
            logprobs: list[float] = []
            for token, lp in zip(chosen[n], logprob[n], strict=True):
                if token in self.eos_set:
                    break
                tokens.append(token)
                logprobs.append(lp)
            answers.append((self.rows[row][0], tokens, logprobs, "length" if cut[n] else "stop"))
        self.send(answers)


def work(index: int, path: str, dtype_name: str, eos: list[int], pad: int, inbox: Any, outbox: Any) -> None:
    """A worker process: one copy of the model on the GPU, generating each batch it is sent and sending
    back every row as it finishes, then word that it is free."""
    torch.set_float32_matmul_precision("high")  # TF32 matrix products on the GPU
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    file = Path(path)
    model = AutoModelForCausalLM.from_pretrained(
        str(file.parent), gguf_file=file.name, dtype=getattr(torch, dtype_name)
    )
    model.to(device).eval()
    outbox.put(("ready", index, int(getattr(model.config, "max_position_embeddings", 32768))))
    while True:
        rows: list[Row] | None = inbox.get()
        if rows is None:
            return
        try:
            generate(model, device, rows, eos, pad, lambda answers: outbox.put(("rows", index, answers)))
        except Exception as exc:  # answer every row of the batch rather than hang it
            outbox.put(("failed", index, ([r[0] for r in rows], f"{type(exc).__name__}: {exc}")))
        outbox.put(("free", index, None))


@torch.inference_mode()
def generate(model: Any, device: torch.device, rows: list[Row], eos: list[int], pad: int, send: Any) -> None:
    width = max(len(r[1]) for r in rows)
    ids = torch.full((len(rows), width), pad, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for n, row in enumerate(rows):
        ids[n, width - len(row[1]) :] = torch.tensor(row[1])
        mask[n, width - len(row[1]) :] = 1
    sampler = RowSampler(rows, width, eos, device, send)
    config = GenerationConfig(
        max_new_tokens=max(r[3] for r in rows) + 1, do_sample=False, eos_token_id=eos, pad_token_id=pad
    )
    model.generate(
        input_ids=ids.to(device), attention_mask=mask.to(device), generation_config=config, logits_processor=[sampler]
    )
    sampler.flush(everything=True)


class Engine:
    """The tokenizer, the waiting jobs, and the worker processes that generate them: a free worker
    takes every job waiting (up to a batch), so a new request never waits for a busy batch to end."""

    def __init__(self, name: str, path: Path, workers: int, max_batch: int, padded: int, dtype: str) -> None:
        self.name = name
        self.tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
        self.eos = sorted({self.tokenizer.convert_tokens_to_ids(t) for t in ("<|im_end|>", "<|endoftext|>")})
        self.pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else self.eos[-1]
        self.max_batch = max_batch
        self.padded = padded
        self.waiting: list[Job] = []
        self.running: dict[int, Job] = {}
        self.free: list[int] = []
        self.ready = 0
        self.n_ctx = 32768
        """The model's context length, as the first worker to load it reads it."""
        self.workers = workers
        self.batches = 0
        self.generated = 0
        self.lock = threading.Condition()
        self.counter = 0
        context = multiprocessing.get_context("spawn")
        self.outbox = context.Queue()
        self.inboxes = [context.Queue() for _ in range(workers)]
        for index in range(workers):
            context.Process(
                target=work,
                args=(index, str(path), dtype, self.eos, self.pad, self.inboxes[index], self.outbox),
                daemon=True,
            ).start()
        threading.Thread(target=self._dispatch, daemon=True).start()
        threading.Thread(target=self._collect, daemon=True).start()

    def encode(self, messages: list[dict[str, Any]]) -> list[int]:
        ids = self.tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True)
        return list(ids["input_ids"] if isinstance(ids, dict) or hasattr(ids, "keys") else ids)

    def submit(self, job: Job) -> None:
        with self.lock:
            self.waiting.append(job)
            self.lock.notify_all()

    def next_ident(self) -> int:
        with self.lock:
            self.counter += 1
            return self.counter

    def _dispatch(self) -> None:
        while True:
            with self.lock:
                while not (self.waiting and self.free):
                    self.lock.wait()
            time.sleep(0.02)  # let the requests that arrive together go together
            with self.lock:
                batch: list[Job] = []
                width = 0
                while self.waiting and len(batch) < self.max_batch:
                    job = self.waiting[0]
                    if batch and (len(batch) + 1) * max(width, len(job.prompt)) > self.padded:
                        break
                    batch.append(self.waiting.pop(0))
                    width = max(width, len(job.prompt))
                worker = self.free.pop(0)
                for job in batch:
                    self.running[job.ident] = job
                self.batches += 1
            self.inboxes[worker].put([(j.ident, j.prompt, j.temperature, j.max_tokens) for j in batch])

    def _collect(self) -> None:
        while True:
            kind, worker, payload = self.outbox.get()
            with self.lock:
                if kind in ("ready", "free"):
                    if kind == "ready":
                        self.ready += 1
                        self.n_ctx = payload
                    self.free.append(worker)
                    self.lock.notify_all()
                    continue
                if kind == "failed":
                    idents, message = payload
                    for ident in idents:
                        job = self.running.pop(ident, None)
                        if job is not None:
                            job.loop.call_soon_threadsafe(_fail, job.future, RuntimeError(message))
                    continue
                for ident, tokens, logprobs, finish in payload:
                    job = self.running.pop(ident, None)
                    if job is None:
                        continue
                    job.tokens, job.logprobs, job.finish = tokens, logprobs, finish
                    self.generated += len(tokens)
                    job.loop.call_soon_threadsafe(_resolve, job.future, job)


def _resolve(future: asyncio.Future[Job], job: Job) -> None:
    if not future.done():
        future.set_result(job)


def _fail(future: asyncio.Future[Job], exc: Exception) -> None:
    if not future.done():
        future.set_exception(exc)


def _error(status: int, message: str) -> web.Response:
    return web.json_response({"error": {"message": message, "type": "invalid_request_error"}}, status=status)


def _text_messages(messages: Any) -> list[dict[str, Any]]:
    out = []
    for m in messages:
        content = m.get("content")
        if isinstance(content, list):  # content parts: keep the text ones
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        out.append({"role": m["role"], "content": content or ""})
    return out


def make_app(engine: Engine) -> web.Application:
    started = time.time()

    async def completions(request: web.Request) -> web.StreamResponse:
        try:
            body = await request.json()
            messages = _text_messages(body["messages"])
        except (ValueError, KeyError, TypeError, AttributeError):
            return _error(400, "the body must be JSON with a messages list")
        if body.get("response_format") is not None:
            return _error(400, "response_format is not supported by this server")
        if body.get("tools"):
            return _error(400, "tools are not supported by this server")
        loop = asyncio.get_running_loop()
        job = Job(
            ident=engine.next_ident(),
            prompt=engine.encode(messages),
            temperature=float(body.get("temperature") if body.get("temperature") is not None else 0.8),
            max_tokens=int(body.get("max_tokens") or body.get("max_completion_tokens") or DEFAULT_MAX_TOKENS),
            loop=loop,
            future=loop.create_future(),
        )
        engine.submit(job)
        await job.future
        text = engine.tokenizer.decode(job.tokens, skip_special_tokens=True)
        usage = {
            "prompt_tokens": len(job.prompt),
            "completion_tokens": len(job.tokens),
            "total_tokens": len(job.prompt) + len(job.tokens),
        }
        logprobs = None
        if body.get("logprobs"):
            pieces = engine.tokenizer.batch_decode([[t] for t in job.tokens])
            content = [
                {"token": p, "logprob": lp, "bytes": None, "top_logprobs": []}
                for p, lp in zip(pieces, job.logprobs, strict=True)
            ]
            logprobs = {"content": content}
        ident, created = f"chatcmpl-{uuid.uuid4().hex}", int(time.time())
        if not body.get("stream"):
            choice = {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": job.finish,
                "logprobs": logprobs,
            }
            return web.json_response(
                {
                    "id": ident,
                    "object": "chat.completion",
                    "created": created,
                    "model": engine.name,
                    "choices": [choice],
                    "usage": usage,
                }
            )
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        await response.prepare(request)
        base = {"id": ident, "object": "chat.completion.chunk", "created": created, "model": engine.name}
        chunks = [
            {"index": 0, "delta": {"role": "assistant", "content": text}, "finish_reason": None, "logprobs": logprobs},
            {"index": 0, "delta": {}, "finish_reason": job.finish},
        ]
        for choice in chunks:
            await response.write(f"data: {json.dumps({**base, 'choices': [choice]})}\n\n".encode())
        await response.write(f"data: {json.dumps({**base, 'choices': [], 'usage': usage})}\n\n".encode())
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        return response

    async def models(_: web.Request) -> web.Response:
        listing = {"id": engine.name, "object": "model", "owned_by": "local", "meta": {"n_ctx_train": engine.n_ctx}}
        return web.json_response({"object": "list", "data": [listing]})

    async def health(_: web.Request) -> web.Response:
        seconds = time.time() - started
        if engine.ready < engine.workers:
            return web.json_response({"status": "loading", "ready": engine.ready}, status=503)
        return web.json_response(
            {
                "status": "ok",
                "batches": engine.batches,
                "generated_tokens": engine.generated,
                "tokens_per_s": round(engine.generated / max(seconds, 1e-9), 1),
                "waiting": len(engine.waiting),
                "running": len(engine.running),
                "free": len(engine.free),
            }
        )

    app = web.Application(client_max_size=64 * 1024 * 1024)
    app.router.add_post("/v1/chat/completions", completions)
    app.router.add_get("/v1/models", models)
    app.router.add_get("/health", health)
    return app


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="NAME=PATH.gguf")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, action="append", help="a port to listen on (repeat for more; default 8391)")
    parser.add_argument("--workers", type=int, default=4, help="processes with a copy of the model each")
    parser.add_argument("--max-batch", type=int, default=256)
    parser.add_argument("--padded-tokens", type=int, default=PADDED_TOKENS)
    parser.add_argument("--dtype", choices=("float32", "bfloat16", "float16"), default="float32")
    args = parser.parse_args()
    name, _, path = args.model.partition("=")
    engine = Engine(name, Path(path), args.workers, args.max_batch, args.padded_tokens, args.dtype)
    asyncio.run(serve(make_app(engine), args.host, args.port or [8391]))


async def serve(app: web.Application, host: str, ports: list[int]) -> None:
    """Answer on every port given: a resumed run keeps the addresses it started with."""
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    for port in ports:
        await web.TCPSite(runner, host, port).start()
        print(f"serving at http://{host}:{port}/v1", flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    main()
