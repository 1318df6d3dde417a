"""An OpenAI-compatible Chat Completions server over Hugging Face transformers, for bench runs on a
GPU machine that has no llama.cpp build.

It serves the same GGUF files as ``benchmarks/llama_server.sh`` (transformers reads and dequantizes
them), answers the subset of Chat Completions that ``dialectic`` sends (``messages``,
``temperature``, ``max_tokens``, ``logprobs``, ``stream``), and batches every request that waits
into one generation on the GPU, so a bench run with a high ``--concurrency`` keeps the card busy.

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
import queue
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


@dataclass
class Job:
    """One request waiting for, or in, a batch."""

    prompt: list[int]
    temperature: float
    max_tokens: int
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[Job]
    tokens: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    finish: str = "stop"


class RowSampler(LogitsProcessor):
    """Chooses every row's next token itself (so each row keeps its own temperature and length limit),
    records it with its log-probability, and hands ``generate`` scores where only that token is finite."""

    def __init__(self, jobs: list[Job], prompt_width: int, eos: list[int], device: torch.device) -> None:
        self.jobs = jobs
        self.prompt_width = prompt_width
        self.eos = torch.tensor(eos, device=device)
        self.temps = torch.tensor([j.temperature for j in jobs], device=device, dtype=torch.float32)
        self.limits = torch.tensor([j.max_tokens for j in jobs], device=device)
        self.done = torch.zeros(len(jobs), dtype=torch.bool, device=device)
        self.steps: list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]] = []

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
        self.steps.append((chosen, logprob, cut & ~self.done))
        self.done |= torch.isin(chosen, self.eos) | cut
        out = torch.full_like(raw, float("-inf"))
        out.scatter_(1, chosen[:, None], 0.0)
        return out  # type: ignore[return-value]

    def finish(self) -> None:
        """Write each job's tokens, log-probabilities and finish reason (one copy from the GPU)."""
        if not self.steps:
            return
        chosen = torch.stack([s[0] for s in self.steps], 1).tolist()
        logprob = torch.stack([s[1] for s in self.steps], 1).tolist()
        cut = torch.stack([s[2] for s in self.steps], 1).any(1).tolist()
        eos = set(self.eos.tolist())
        for row, job in enumerate(self.jobs):
            for token, lp in zip(chosen[row], logprob[row], strict=True):
                if token in eos:
                    break
                job.tokens.append(token)
                job.logprobs.append(lp)
            job.finish = "length" if cut[row] else "stop"


class Engine:
    """The model, its tokenizer, and the thread that runs batches."""

    def __init__(self, name: str, path: Path, max_batch: int, dtype: torch.dtype) -> None:
        self.name = name
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
        self.model = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name, dtype=dtype)
        self.model.to(self.device).eval()
        self.eos = sorted({self.tokenizer.convert_tokens_to_ids(t) for t in ("<|im_end|>", "<|endoftext|>")})
        self.pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else self.eos[-1]
        self.max_batch = max_batch
        self.jobs: queue.Queue[Job] = queue.Queue()
        self.held: list[Job] = []
        self.batches = 0
        self.generated = 0
        threading.Thread(target=self._loop, daemon=True).start()

    def encode(self, messages: list[dict[str, Any]]) -> list[int]:
        ids = self.tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True)
        return list(ids["input_ids"] if isinstance(ids, dict) or hasattr(ids, "keys") else ids)

    def _loop(self) -> None:
        while True:
            batch = [self.held.pop(0) if self.held else self.jobs.get()]
            time.sleep(0.02)  # let the requests that arrive together go together
            width = len(batch[0].prompt)
            while len(batch) < self.max_batch:
                try:
                    job = self.held.pop(0) if self.held else self.jobs.get_nowait()
                except queue.Empty:
                    break
                if (len(batch) + 1) * max(width, len(job.prompt)) > PADDED_TOKENS:
                    self.held.insert(0, job)  # first in the next batch
                    break
                batch.append(job)
                width = max(width, len(job.prompt))
            try:
                self._run(batch)
            except Exception as exc:  # answer every waiting request rather than hang them
                for job in batch:
                    job.loop.call_soon_threadsafe(_fail, job.future, exc)
                continue
            for job in batch:
                job.loop.call_soon_threadsafe(_resolve, job.future, job)

    @torch.inference_mode()
    def _run(self, batch: list[Job]) -> None:
        width = max(len(j.prompt) for j in batch)
        ids = torch.full((len(batch), width), self.pad, dtype=torch.long)
        mask = torch.zeros((len(batch), width), dtype=torch.long)
        for row, job in enumerate(batch):
            ids[row, width - len(job.prompt) :] = torch.tensor(job.prompt)
            mask[row, width - len(job.prompt) :] = 1
        sampler = RowSampler(batch, width, self.eos, self.device)
        config = GenerationConfig(
            max_new_tokens=max(j.max_tokens for j in batch) + 1,
            do_sample=False,
            eos_token_id=self.eos,
            pad_token_id=self.pad,
        )
        self.model.generate(
            input_ids=ids.to(self.device),
            attention_mask=mask.to(self.device),
            generation_config=config,
            logits_processor=[sampler],
        )
        sampler.finish()
        self.batches += 1
        self.generated += sum(len(j.tokens) for j in batch)


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
            prompt=engine.encode(messages),
            temperature=float(body.get("temperature") if body.get("temperature") is not None else 0.8),
            max_tokens=int(body.get("max_tokens") or body.get("max_completion_tokens") or DEFAULT_MAX_TOKENS),
            loop=loop,
            future=loop.create_future(),
        )
        engine.jobs.put(job)
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
        n_ctx = int(getattr(engine.model.config, "max_position_embeddings", 32768))
        listing = {"id": engine.name, "object": "model", "owned_by": "local", "meta": {"n_ctx_train": n_ctx}}
        return web.json_response({"object": "list", "data": [listing]})

    async def health(_: web.Request) -> web.Response:
        seconds = time.time() - started
        return web.json_response(
            {
                "status": "ok",
                "batches": engine.batches,
                "generated_tokens": engine.generated,
                "tokens_per_s": round(engine.generated / max(seconds, 1e-9), 1),
                "waiting": engine.jobs.qsize(),
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
    parser.add_argument("--port", type=int, default=8391)
    parser.add_argument("--max-batch", type=int, default=256)
    parser.add_argument("--dtype", choices=("float32", "bfloat16", "float16"), default="float32")
    args = parser.parse_args()
    name, _, path = args.model.partition("=")
    torch.set_float32_matmul_precision("high")  # TF32 matrix products on the GPU
    engine = Engine(name, Path(path), args.max_batch, getattr(torch, args.dtype))
    print(f"serving {name} on {engine.device} at http://{args.host}:{args.port}/v1", flush=True)
    web.run_app(make_app(engine), host=args.host, port=args.port, print=None, access_log=None)


if __name__ == "__main__":
    main()
