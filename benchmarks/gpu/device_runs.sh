#!/usr/bin/env bash
# The deliberation runs of benchmarks/deliberation_runs.sh on a GPU machine with no llama.cpp and no
# network: each model is served by benchmarks/gpu/serve_hf.py (worker processes with a copy of the
# model each), and every run goes at once until a deadline.
# Expects what benchmarks/gpu/pack.sh prepared under .w/: the models in pieces (kept under $WORK by
# benchmarks/gpu/receive.sh), dialectic's dependencies as wheels, and dialectic's source.
#   RUN_SECONDS=480 OUT=results-dir benchmarks/gpu/device_runs.sh
# Each run resumes from its committed results file (benchmarks/results/NAME.json) when there is one,
# and writes $WORK/results/NAME.json as items finish (bench -o), copied to OUT every 20 s, so a run
# cut by the deadline keeps every finished item; a second call on the same machine resumes it.
set -uo pipefail
cd "$(dirname "$0")/../.."
work="${WORK:-/tmp/w}"
out="${OUT:?set OUT}"
deadline=$(($(date +%s) + ${RUN_SECONDS:-480}))
server_python="${SERVER_PYTHON:-python3}"
bench_python="${BENCH_PYTHON:-python3}"
health() { "$server_python" -c "import sys, urllib.request; print(urllib.request.urlopen(f'http://127.0.0.1:{sys.argv[1]}/health', timeout=5).read().decode())" "$1" 2>/dev/null; }
log() { echo "[$(date +%T)] $*" | tee -a "$out/progress.log"; }

results="$work/results" # kept on the machine between calls: a second call resumes every run
mkdir -p "$results"
for committed in benchmarks/results/*-gpu.json; do
  [ -f "$results/$(basename "$committed")" ] || cp "$committed" "$results/"
done
models=()
for sum in .w/*.gguf.sha256; do
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
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/gg .w/whl/gguf-*.whl
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .w/whl/*.whl
fi
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1 | tee -a "$out/progress.log"

# the 0.5B answers on the four ports the committed runs were started with (a resumed run keeps its addresses)
declare -A PORT=([qwen2.5-0.5b]="8391 8392 8393 8394" [qwen2.5-1.5b]="8395")
declare -A SERVE=( # workers, rows per batch, prompt tokens (padding included) per batch
  [qwen2.5-0.5b]="--workers ${WORKERS_05:-5} --max-batch 160 --padded-tokens 100000"
  [qwen2.5-1.5b]="--workers ${WORKERS_15:-3} --max-batch 96 --padded-tokens 60000"
)
ports=()
for name in "${models[@]}"; do
  read -ra listen <<<"${PORT[$name]}"
  port=${listen[0]}
  ports+=("$port")
  # shellcheck disable=SC2086
  PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True PYTHONPATH=/tmp/gg HF_HUB_DISABLE_PROGRESS_BARS=1 TQDM_DISABLE=1 \
    PYTHONUNBUFFERED=1 "$server_python" benchmarks/gpu/serve_hf.py --model "$name=$work/$name.gguf" \
    $(printf -- '--port %s ' "${listen[@]}") ${SERVE[$name]} >"/tmp/server-$port.log" 2>&1 &
done
for port in "${ports[@]}"; do
  until health "$port" >/dev/null; do
    sleep 2
    [ "$(date +%s)" -lt "$deadline" ] || { log "server $port never came up: $(tail -c 600 "/tmp/server-$port.log")"; exit 1; }
  done
done
log "servers up: ${models[*]}"

export PYTHONPATH=/tmp/site:$PWD/.w/src PYTHONUNBUFFERED=1
CORE="single,self-consistency:7,adaptive"
DEBATES="debate:3x2,format:vote,dialectic"
run() { # NAME CONFIG CONCURRENCY TASK-ARGS...
  local name=$1 config=$2 concurrency=$3
  shift 3
  [ -f "benchmarks/configs/$config.json" ] || return 0
  grep -q "$(grep -o '127.0.0.1:[0-9]*' "benchmarks/configs/$config.json" | head -1 | cut -d: -f2)" <<<"${ports[*]}" || return 0
  # a resumed run keeps the agents it started with (-c would have to match them to the letter)
  local setup=(-c "benchmarks/configs/$config.json")
  [ -f "$results/$name.json" ] && setup=(--resume "$results/$name.json")
  "$bench_python" -m dialectic bench "$@" "${setup[@]}" --concurrency "$concurrency" \
    -o "$results/$name.json" --store "/tmp/store-$name" >"/tmp/$name.log" 2>&1 &
  echo $! >"/tmp/$name.pid"
}
run arithmetic-0.5b-gpu gpu-0.5b 256 arithmetic -n 200 --difficulty 3 --seed 2026 --arms "$CORE"
run word-problems-0.5b-gpu gpu-0.5b 128 word-problems -n 100 --seed 2026 --arms "$CORE"
run dates-0.5b-gpu gpu-0.5b 128 dates -n 100 --seed 2026 --arms "$CORE"
run boolean-logic-0.5b-gpu gpu-0.5b 128 boolean-logic -n 100 --seed 2026 --arms "$CORE"
run arithmetic-0.5b-debates-gpu gpu-0.5b 200 arithmetic -n 200 --difficulty 3 --seed 2026 --arms "$DEBATES"
# a panel of three temperatures (0.3, 0.7, 1.1) of the one model: the heterogeneity one server allows
run arithmetic-0.5b-panel-gpu gpu-0.5b-panel 128 arithmetic -n 200 --difficulty 3 --seed 2026 --arms adaptive
run arithmetic-1.5b-gpu gpu-1.5b 300 arithmetic -n 100 --difficulty 5 --seed 2026 --arms "$CORE"

while [ "$(date +%s)" -lt "$deadline" ]; do
  sleep 20
  line=""
  for port in "${ports[@]}"; do line+=" $port:$(health "$port" | tr -d ' ')"; done
  log "$line"
  cp "$results"/*.json "$out"/ 2>/dev/null
  alive=0
  for f in /tmp/*.pid; do kill -0 "$(cat "$f")" 2>/dev/null && alive=1; done
  [ "$alive" = 1 ] || break
done
for f in /tmp/*.pid; do kill -INT "$(cat "$f")" 2>/dev/null; done
sleep 8
for f in /tmp/*.pid; do
  name=$(basename "$f" .pid)
  log "$name: $(tail -c 300 "/tmp/$name.log" | tr '\n' ' ')"
done
for port in "${ports[@]}"; do log "server $port: $(grep -v -i -e warn -e '%|' "/tmp/server-$port.log" | tail -5)"; done
cp "$results"/*.json "$out"/ 2>/dev/null
ls -la "$out" | tee -a "$out/progress.log"
