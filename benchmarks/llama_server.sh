#!/usr/bin/env bash
# Serve a local model with llama.cpp's llama-server for long bench runs: parallel slots, one port.
#   benchmarks/llama_server.sh [MODEL_GGUF] [PORT] [SLOTS]
# Defaults: the embedded 0.5B model (as `make demo` installs it), port 8391, 8 slots of 3,072 tokens.
# The binary is the one `make llama-server` caches; set DIALECTIC_LLAMA_SERVER to use another.
# It computes on every core; set DIALECTIC_LLAMA_THREADS when two servers share the machine (each
# spins on its threads while waiting, so two servers on all cores slow each other down tenfold).
set -euo pipefail
cache="${DIALECTIC_CACHE:-$HOME/.cache/dialectic}"
model="${1:-$cache/models/qwen2.5-0.5b.gguf}"
port="${2:-8391}"
slots="${3:-8}"
binary="${DIALECTIC_LLAMA_SERVER:-$(ls -d "$cache"/llama-server/*/llama-server 2>/dev/null | tail -1)}"
test -x "$binary" || { echo "llama-server is not built: run make llama-server" >&2; exit 4; }
test -f "$model" || { echo "no model at $model: run make demo (or dialectic models pull)" >&2; exit 4; }
threads="${DIALECTIC_LLAMA_THREADS:-$(nproc)}"
# --poll 0: idle threads sleep instead of spinning, so the server leaves the cores to whatever else runs (tests,
# a second server) between batches; on a machine it has to itself, set DIALECTIC_LLAMA_POLL=50 (llama.cpp's default).
poll="${DIALECTIC_LLAMA_POLL:-0}"
exec "$binary" -m "$model" -a "$(basename "$model" .gguf)" --host 127.0.0.1 --port "$port" \
  -c $((3072 * slots)) -np "$slots" -t "$threads" -tb "$threads" --jinja --no-webui -n 1024 --poll "$poll"
