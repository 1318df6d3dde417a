#!/usr/bin/env bash
# The deliberation runs of benchmarks/deliberation_runs.sh on a GPU machine with no llama.cpp and no
# network: the 0.5B model is served by benchmarks/gpu/serve_hf.py (four server processes, so one
# process's Python time overlaps another's GPU work), and every run goes at once until a deadline.
# Expects what benchmarks/gpu/pack.sh prepared under .w/: the model in pieces (already joined into
# $WORK by benchmarks/gpu/receive.sh), dialectic's dependencies as wheels, and dialectic's source.
#   RUN_SECONDS=480 OUT=results-dir benchmarks/gpu/device_runs.sh
# Each run writes $WORK/results/NAME.json as items finish (bench -o), copied to OUT every 20 s, so a
# run cut by the deadline keeps every finished item; a second call on the same machine resumes it.
set -uo pipefail
cd "$(dirname "$0")/../.."
work="${WORK:-/tmp/w}"
out="${OUT:?set OUT}"
deadline=$(($(date +%s) + ${RUN_SECONDS:-480}))
model="$work/qwen2.5-0.5b.gguf"
server_python="${SERVER_PYTHON:-python3}"
bench_python="${BENCH_PYTHON:-python3}"
health() { "$server_python" -c "import sys, urllib.request; print(urllib.request.urlopen(f'http://127.0.0.1:{sys.argv[1]}/health', timeout=5).read().decode())" "$1" 2>/dev/null; }
log() { echo "[$(date +%T)] $*" | tee -a "$out/progress.log"; }

[ -f "$model" ] || { cat "$work"/m* >"$model" && rm -f "$work"/m*; }
results="$work/results" # kept on the machine between calls: a second call resumes every run
mkdir -p "$results"
log "model $(sha256sum "$model" | cut -c1-16) $(stat -c %s "$model") bytes (want $(cat .w/model.sha256 | cut -c1-16))"
if [ -z "${SKIP_WHEELS:-}" ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/gg .w/whl/gguf-*.whl
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .w/whl/*.whl
fi
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1 | tee -a "$out/progress.log"

ports=(8391 8392 8393 8394)
for port in "${ports[@]}"; do
  PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True PYTHONPATH=/tmp/gg HF_HUB_DISABLE_PROGRESS_BARS=1 TQDM_DISABLE=1 PYTHONUNBUFFERED=1 \
    "$server_python" benchmarks/gpu/serve_hf.py --model "qwen2.5-0.5b=$model" --port "$port" --max-batch 320 \
    >"/tmp/server-$port.log" 2>&1 &
done
for port in "${ports[@]}"; do
  until health "$port" >/dev/null; do
    sleep 2
    [ "$(date +%s)" -lt "$deadline" ] || { log "server $port never came up"; exit 1; }
  done
done
log "servers up"

export PYTHONPATH=/tmp/site:$PWD/.w/src PYTHONUNBUFFERED=1
CORE="single,self-consistency:7,adaptive"
DEBATES="debate:3x2,format:vote,dialectic"
run() { # NAME CONFIG PORT CONCURRENCY TASK-ARGS...
  local name=$1 config=$2 port=$3 concurrency=$4
  shift 4
  sed "s/8391/$port/" "benchmarks/configs/$config.json" >"/tmp/config-$name.json"
  local resume=()
  [ -f "$results/$name.json" ] && resume=(--resume "$results/$name.json")
  "$bench_python" -m dialectic bench "$@" "${resume[@]}" -c "/tmp/config-$name.json" --concurrency "$concurrency" \
    -o "$results/$name.json" --store "/tmp/store-$name" >"/tmp/$name.log" 2>&1 &
  echo $! >"/tmp/$name.pid"
}
run arithmetic-0.5b-gpu gpu-0.5b 8391 160 arithmetic -n 200 --difficulty 3 --seed 2026 --arms "$CORE"
run word-problems-0.5b-gpu gpu-0.5b 8392 96 word-problems -n 100 --seed 2026 --arms "$CORE"
run dates-0.5b-gpu gpu-0.5b 8392 96 dates -n 100 --seed 2026 --arms "$CORE"
run boolean-logic-0.5b-gpu gpu-0.5b 8393 160 boolean-logic -n 100 --seed 2026 --arms "$CORE"
run arithmetic-0.5b-debates-gpu gpu-0.5b 8394 96 arithmetic -n 200 --difficulty 3 --seed 2026 --arms "$DEBATES"
# a panel of three temperatures (0.3, 0.7, 1.1) of the one model: the heterogeneity one server allows
run arithmetic-0.5b-panel-gpu gpu-0.5b-panel 8394 64 arithmetic -n 200 --difficulty 3 --seed 2026 --arms adaptive

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
