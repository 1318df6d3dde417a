#!/usr/bin/env bash
# The deliberation runs of docs/bench.md on a GPU machine with no network, every run at once until a
# deadline. Each model is served on its ports by llama.cpp's llama-server built for CUDA
# (benchmarks/gpu/build_llama_cuda.sh, carried as .w/llama-server.gz), one process per port; where that binary
# is missing or does not come up, by benchmarks/gpu/serve_hf.py (transformers) instead.
# Expects what benchmarks/gpu/pack.sh prepared under .w/, carried one thing a call and kept under $WORK
# by benchmarks/gpu/receive.sh: the models in pieces with their checksums, dialectic's dependencies as
# wheels, and the server; dialectic itself is the tree's src/. The script runs receive.sh itself, so
# the call that runs it may carry the last of them.
#   RUN_SECONDS=480 OUT=results-dir benchmarks/gpu/device_runs.sh
# Each run resumes from its committed results file (benchmarks/results/NAME.json) when there is one,
# and writes $WORK/results/NAME.json as items finish (bench -o), packed into OUT/results.tgz every
# 20 s (OUT brings back 8 files at most), so a run
# cut by the deadline keeps every finished item; a second call on the same machine resumes it.
set -uo pipefail
cd "$(dirname "$0")/../.."
work="${WORK:-/tmp/w}"
out="${OUT:?set OUT}"
deadline=$(($(date +%s) + ${RUN_SECONDS:-480}))
python="${PYTHON:-python3}"
health() { "$python" -c "import sys, urllib.request; print(urllib.request.urlopen(f'http://127.0.0.1:{sys.argv[1]}/health', timeout=5).read().decode())" "$1" 2>/dev/null; }
log() { echo "[$(date +%T)] $*" | tee -a "$out/progress.log"; }
# the runs and the servers end with the script (the GPU machine ends them anyway; another machine would not)
trap 'for f in /tmp/*.pid; do kill -9 "$(cat "$f")" 2>/dev/null; done; rm -f /tmp/*.pid; pkill -f bin/llama-server; kill $(jobs -p) 2>/dev/null' EXIT

WORK="$work" benchmarks/gpu/receive.sh | tee -a "$out/progress.log"
results="$work/results" # kept on the machine between calls: a second call resumes every run
mkdir -p "$results"
for committed in benchmarks/results/*.json; do
  [ -f "$results/$(basename "$committed")" ] || cp "$committed" "$results/"
done
models=()
for sum in "$work"/*.gguf.sha256; do
  name=$(basename "$sum" .gguf.sha256)
  model="$work/$name.gguf"
  [ -f "$model" ] || { cat "$work/$name.gguf".[0-9]* >"$model" && rm -f "$work/$name.gguf".[0-9]*; }
  if [ "$(sha256sum "$model" | cut -d' ' -f1)" = "$(cat "$sum")" ]; then
    models+=("$name")
    log "$name: $(stat -c %s "$model") bytes, SHA-256 matches"
  else
    log "$name: SHA-256 does not match: not served"
  fi
done
if [ -z "${SKIP_WHEELS:-}" ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/gg "$work"/whl/gguf-*.whl
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site "$work"/whl/*.whl
fi
[ ${#models[@]} -gt 0 ] || { log "no model to serve (.w/*.gguf.sha256 never carried?): no run started"; exit 1; }
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1 | tee -a "$out/progress.log"
# the servers of a call that just ended may still hold the card's memory for a moment
for _ in $(seq 30); do
  [ "$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | head -1)" -lt 2000 ] && break
  sleep 1
done

# The 0.5B answers on the ports its committed runs were started with (a resumed run keeps its
# addresses) and on one port per new run; the 1.5B on 8395.
declare -A PORT=([qwen2.5-0.5b]="8391 8392 8393 8394 8396 8397 8398 8399" [qwen2.5-1.5b]="8395")
declare -A SLOTS=([qwen2.5-0.5b]=${SLOTS_05:-64} [qwen2.5-1.5b]=${SLOTS_15:-128})
declare -A SERVE_HF=( # workers, rows per batch, prompt tokens (padding included) per batch
  [qwen2.5-0.5b]="--workers ${WORKERS_05:-5} --max-batch 160 --padded-tokens 100000"
  [qwen2.5-1.5b]="--workers ${WORKERS_15:-3} --max-batch 96 --padded-tokens 60000"
)
# llama-server's CUDA libraries (cuBLAS, the runtime) are the ones the machine's PyTorch brings
cuda_libs=$(dirname "$(find /opt /usr/local /usr/lib -name 'libcublasLt.so.13*' 2>/dev/null | head -1)" 2>/dev/null)
runtime_libs=$(dirname "$(find /opt /usr/local /usr/lib -name 'libcudart.so.13*' 2>/dev/null | head -1)" 2>/dev/null)
export LD_LIBRARY_PATH="$work/bin/lib:$cuda_libs:$runtime_libs:${LD_LIBRARY_PATH:-}"
llama_server() { # NAME PORT
  local slots=${SLOTS[$1]}
  # Each slot has its own 3,072 cells, as benchmarks/llama_server.sh gives them on the CPU, so a
  # token attends to its own slot's cells only. With one cache shared by the slots (KVU=1), the
  # build (no FlashAttention) computes attention scores over every slot's cells: cells × -ub ×
  # heads × 4 bytes (3.8 GB for the 0.5B at 64 slots of 2,048 cells), and as much more work.
  local cache=(-c $((slots * 3072)))
  [ -n "${KVU:-}" ] && cache=(-kvu -c $((slots * 2048)))
  "$work/bin/llama-server" -m "$work/$1.gguf" -a "$1" --host 127.0.0.1 --port "$2" -ngl 999 \
    -np "$slots" "${cache[@]}" -b 2048 -ub 512 -t 2 -tb 2 --jinja --no-webui -n 1024 \
    >"/tmp/server-$2.log" 2>&1 &
}
serve_hf() { # NAME PORT...
  local name=$1
  shift
  # shellcheck disable=SC2086
  PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True PYTHONPATH=/tmp/gg HF_HUB_DISABLE_PROGRESS_BARS=1 TQDM_DISABLE=1 \
    PYTHONUNBUFFERED=1 "$python" benchmarks/gpu/serve_hf.py --model "$name=$work/$name.gguf" \
    $(printf -- '--port %s ' "$@") ${SERVE_HF[$name]} >"/tmp/server-$1.log" 2>&1 &
}
answers() { # PORT: whether the server there completes a short chat (a server can be healthy and fail to generate)
  "$python" - "$1" <<'PY' >>"$out/progress.log" 2>&1
import json, sys, urllib.request
port = sys.argv[1]
body = json.dumps({"messages": [{"role": "user", "content": "What is 2+3? Answer with the number."}],
                   "max_tokens": 8, "temperature": 0, "logprobs": True, "top_logprobs": 1}).encode()
request = urllib.request.Request(f"http://127.0.0.1:{port}/v1/chat/completions", body, {"Content-Type": "application/json"})
reply = json.loads(urllib.request.urlopen(request, timeout=60).read())
text = reply["choices"][0]["message"]["content"]
print(f"port {port} answers: {text!r}")
sys.exit(0 if text.strip() else 1)
PY
}
wait_up() { # SECONDS PORT...: whether every port answers within SECONDS
  local until=$(($(date +%s) + $1))
  shift
  for port in "$@"; do
    until health "$port" >/dev/null; do
      grep -q "exiting due to" "/tmp/server-$port.log" 2>/dev/null && { log "port $port: $(grep -m1 -e ' E ' "/tmp/server-$port.log")"; return 1; }
      sleep 2
      [ "$(date +%s)" -lt "$until" ] || { log "port $port not up: $(tail -c 400 "/tmp/server-$port.log")"; return 1; }
    done
    answers "$port" || { log "port $port is up but does not answer: $(tail -c 400 "/tmp/server-$port.log")"; return 1; }
  done
}
ports=()
for name in "${models[@]}"; do
  read -ra listen <<<"${PORT[$name]}"
  ports+=("${listen[@]}")
  if [ -x "$work/bin/llama-server" ] && [ -z "${SERVER_HF:-}" ]; then
    for port in "${listen[@]}"; do llama_server "$name" "$port"; done
  fi
done
if [ -x "$work/bin/llama-server" ] && [ -z "${SERVER_HF:-}" ] && wait_up 60 "${ports[@]}"; then
  server="llama-server (CUDA)"
else
  pkill -f bin/llama-server
  sleep 2
  for name in "${models[@]}"; do
    read -ra listen <<<"${PORT[$name]}"
    serve_hf "$name" "${listen[@]}"
  done
  wait_up $((deadline - $(date +%s))) "${ports[@]}" || exit 1
  server="serve_hf.py (transformers)"
fi
log "servers up: ${models[*]} on ${ports[*]}, $server"
nvidia-smi --query-gpu=memory.used --format=csv,noheader | tee -a "$out/progress.log"

export PYTHONPATH=/tmp/site:$PWD/src PYTHONUNBUFFERED=1
CORE="single,self-consistency:7,adaptive"
serves() { [[ " ${models[*]} " == *" $1 "* ]]; } # NAME: whether that model is served
run() { # NAME CONFIG PORT CONCURRENCY TASK-ARGS...: the config's 0.5B answers on PORT
  local name=$1 config=$2 port=$3 concurrency=$4
  shift 4
  [ -z "${RUNS:-}" ] || [[ " $RUNS " == *" $name "* ]] || return 0
  # CONCURRENCY="NAME=N ..." gives a run another share of the card than the one below
  for pair in ${CONCURRENCY:-}; do [ "${pair%%=*}" = "$name" ] && concurrency=${pair#*=}; done
  # a config with the 1.5B needs it served (a run finding no server stops; better not to start it)
  grep -q qwen2.5-1.5b "benchmarks/configs/$config.json" && ! serves qwen2.5-1.5b && return
  local setup=(--resume "$results/$name.json")
  if [ ! -f "$results/$name.json" ]; then # a new run: its config, moved to its port
    sed "s/127.0.0.1:8391/127.0.0.1:$port/g" "benchmarks/configs/$config.json" >"/tmp/$name.config.json"
    setup=(-c "/tmp/$name.config.json")
  fi
  "$python" -m dialectic bench "$@" "${setup[@]}" --concurrency "$concurrency" \
    -o "$results/$name.json" --store "/tmp/store-$name" >"/tmp/$name.log" 2>&1 &
  echo $! >"/tmp/$name.pid"
}
# the engine's formats, each on three agents (gpu-0.5b-three): with one, a vote has no ballots.
# convergence-seeking (5 calls an item) and dialectic (14) run apart from the vote (20), so that
# each can finish where the others cannot (benchmarks/results_split.py parted the runs; each keeps
# its ports).
FORMATS="format:vote"
A3="arithmetic -n 200 --difficulty 3 --seed 2026"
# The runs share the card in proportion to their concurrency (the servers batch every request
# waiting), so the runs a session needs most get the most; RUNS names the runs to start (all when
# unset), e.g. RUNS="arithmetic-0.5b-seed2027 word-problems-0.5b-seed2027". The format runs need
# llama-server: on serve_hf.py, whose batches run to their longest reply, a vote's rounds of calls
# took longer than a whole session (2026-11-28: 5 of the 96 vote items started finished).
# The core arms on a seed no rule was chosen on, each item's arms on one server (they share their
# draws), under the adaptive rules of 2026-11-26: two answers at once, the exchange only when contested.
run arithmetic-0.5b-seed2027 gpu-0.5b 8391 256 arithmetic -n 200 --difficulty 3 --seed 2027 --arms "$CORE"
run word-problems-0.5b-seed2027 gpu-0.5b 8392 160 word-problems -n 100 --seed 2027 --arms "$CORE"
run dates-0.5b-seed2027 gpu-0.5b 8393 128 dates -n 100 --seed 2027 --arms "$CORE"
run boolean-logic-0.5b-seed2027 gpu-0.5b 8394 128 boolean-logic -n 100 --seed 2027 --arms "$CORE"
run arithmetic-1.5b-seed2027 gpu-1.5b 8395 300 arithmetic -n 100 --difficulty 5 --seed 2027 --arms "$CORE"
# a budget where the answers scatter: adaptive:13 draws up to 13 answers, self-consistency 7 for every item
run dates-0.5b-seed2028 gpu-0.5b 8391 128 dates -n 100 --seed 2028 --arms "$CORE,adaptive:13"
run dates-0.5b-seed2029 gpu-0.5b 8391 128 dates -n 100 --seed 2029 --arms "$CORE,adaptive:13"
run word-problems-0.5b-seed2029 gpu-0.5b 8391 128 word-problems -n 100 --seed 2029 --arms "$CORE,adaptive:13"
# a panel of two models: the 1.5B (8395) and the 0.5B (8399), on the 1.5B run's items; the debate
# (6 calls an item) runs apart from adaptive (4), so that adaptive can finish on a CPU (results_split.py)
run arithmetic-mixed-gpu gpu-mixed 8399 ${LOW:-32} arithmetic -n 100 --difficulty 5 --seed 2026 --arms adaptive
run arithmetic-mixed-debates-gpu gpu-mixed 8399 ${LOW:-32} arithmetic -n 100 --difficulty 5 --seed 2026 --arms debate:3x2
run arithmetic-0.5b-formats-gpu gpu-0.5b-three 8391 ${LOW:-32} $A3 --arms "$FORMATS"
run arithmetic-0.5b-convergence-gpu gpu-0.5b-three 8391 ${LOW:-32} $A3 --arms format:convergence-seeking
run word-problems-0.5b-formats-gpu gpu-0.5b-three 8392 ${LOW:-32} word-problems -n 100 --seed 2026 --arms "$FORMATS"
run word-problems-0.5b-convergence-gpu gpu-0.5b-three 8392 ${LOW:-32} word-problems -n 100 --seed 2026 --arms format:convergence-seeking
run dates-0.5b-formats-gpu gpu-0.5b-three 8393 ${LOW:-32} dates -n 100 --seed 2026 --arms "$FORMATS"
run dates-0.5b-convergence-gpu gpu-0.5b-three 8393 ${LOW:-32} dates -n 100 --seed 2026 --arms format:convergence-seeking
run boolean-logic-0.5b-formats-gpu gpu-0.5b-three 8399 ${LOW:-32} boolean-logic -n 100 --seed 2026 --arms "$FORMATS"
run boolean-logic-0.5b-convergence-gpu gpu-0.5b-three 8399 ${LOW:-32} boolean-logic -n 100 --seed 2026 --arms format:convergence-seeking
run arithmetic-0.5b-dialectic-gpu gpu-0.5b-three 8391 ${LOW:-32} $A3 --arms dialectic
run word-problems-0.5b-dialectic-gpu gpu-0.5b-three 8392 ${LOW:-32} word-problems -n 100 --seed 2026 --arms dialectic
run dates-0.5b-dialectic-gpu gpu-0.5b-three 8393 ${LOW:-32} dates -n 100 --seed 2026 --arms dialectic
run boolean-logic-0.5b-dialectic-gpu gpu-0.5b-three 8399 ${LOW:-32} boolean-logic -n 100 --seed 2026 --arms dialectic
run arithmetic-0.5b-debates-gpu gpu-0.5b 8394 ${LOW:-32} $A3 --arms debate:3x2
run dates-0.5b-debates-gpu gpu-0.5b 8396 ${LOW:-32} dates -n 100 --seed 2026 --arms debate:3x2
run word-problems-0.5b-debates-gpu gpu-0.5b 8397 ${LOW:-32} word-problems -n 100 --seed 2026 --arms debate:3x2
run boolean-logic-0.5b-debates-gpu gpu-0.5b 8398 ${LOW:-32} boolean-logic -n 100 --seed 2026 --arms debate:3x2
# complete in the repository; listed so that a fresh clone's run list is the whole plan
run arithmetic-0.5b-gpu gpu-0.5b 8391 256 $A3 --arms "$CORE"
run word-problems-0.5b-gpu gpu-0.5b 8392 128 word-problems -n 100 --seed 2026 --arms "$CORE"
run dates-0.5b-gpu gpu-0.5b 8392 128 dates -n 100 --seed 2026 --arms "$CORE"
run boolean-logic-0.5b-gpu gpu-0.5b 8393 128 boolean-logic -n 100 --seed 2026 --arms "$CORE"
run arithmetic-1.5b-gpu gpu-1.5b 8395 300 arithmetic -n 100 --difficulty 5 --seed 2026 --arms "$CORE"
# a panel of three temperatures (0.3, 0.7, 1.1) of the one model
run arithmetic-0.5b-panel-gpu gpu-0.5b-panel 8394 128 $A3 --arms adaptive

generated() { # output tokens in every results file so far
  "$python" -c 'import json, pathlib, sys
print(sum(a["output_tokens"] for p in pathlib.Path(sys.argv[1]).glob("*.json") for a in json.loads(p.read_text())["arms"]))' "$results"
}
started=$(date +%s)
before=$(generated)
while [ "$(date +%s)" -lt "$deadline" ]; do
  sleep 20
  now=$(generated)
  log "generated $((now - before)) tokens in $(($(date +%s) - started)) s, finished items counted"
  line=""
  for port in "${ports[@]}"; do line+=" $port:$(health "$port" | tr -d ' ' | head -c 40)"; done
  log "$line"
  tar -czf "$out/results.tgz" -C "$results" .
  alive=0
  for f in /tmp/*.pid; do kill -0 "$(cat "$f")" 2>/dev/null && alive=1; done
  [ "$alive" = 1 ] || break
done
# SIGTERM, not SIGINT: a background job of a script ignores SIGINT; bench stops on SIGTERM as on Ctrl-C
for f in /tmp/*.pid; do kill -TERM "$(cat "$f")" 2>/dev/null; done
sleep 8
for f in /tmp/*.pid; do
  name=$(basename "$f" .pid)
  log "$name: $(tail -c 300 "/tmp/$name.log" | tr '\n' ' ')"
done
for port in "${ports[@]}"; do log "server $port: $(grep -i -e error -e 'out of memory' "/tmp/server-$port.log" | tail -2)"; done
tar -czf "$out/results.tgz" -C "$results" .
ls -la "$out" | tee -a "$out/progress.log"
