#!/usr/bin/env bash
# The measurement runs of docs/bench.md ("Deliberation that helps"): every protocol against one greedy
# answer and self-consistency, on the embedded 0.5B model behind llama-server (benchmarks/llama_server.sh
# must be serving it on port 8391). Each run writes its results file under benchmarks/results/ as it
# goes; run the script again, on this machine or a fresh clone, and each run resumes from its file
# (finished items are never asked again).
#   benchmarks/deliberation_runs.sh [RUN_NAME...]     (default: all runs, in order)
set -euo pipefail
cd "$(dirname "$0")/.."
config=benchmarks/configs/llama-server-0.5b.json
results=benchmarks/results
bench=(nice -n 10 dialectic bench)
command -v dialectic >/dev/null || bench=(nice -n 10 .venv/bin/dialectic bench)

# Each run: the task and its arms. The sampling arms and the debates are separate runs on the same
# items (benchmarks/bench_tables.py pairs them across files), so the cheap comparison finishes first.
CORE="single,self-consistency:7,adaptive"
DEBATES="debate:3x2,format:vote,dialectic"
declare -A TASK=(
  [arithmetic-0.5b]="arithmetic -n 200 --difficulty 3 --seed 2026 --arms $CORE"
  [word-problems-0.5b]="word-problems -n 100 --seed 2026 --arms $CORE"
  [boolean-logic-0.5b]="boolean-logic -n 100 --seed 2026 --arms $CORE"
  [dates-0.5b]="dates -n 100 --seed 2026 --arms $CORE"
  [arithmetic-0.5b-debates]="arithmetic -n 200 --difficulty 3 --seed 2026 --arms $DEBATES"
)
ORDER=(arithmetic-0.5b word-problems-0.5b boolean-logic-0.5b dates-0.5b arithmetic-0.5b-debates)

for name in "${@:-${ORDER[@]}}"; do
  out="$results/$name.json"
  # shellcheck disable=SC2086
  if [ -f "$out" ]; then
    "${bench[@]}" ${TASK[$name]} -c "$config" --concurrency 2 --resume "$out" -o "$out" \
      --report "$results/$name.md" --store "${DIALECTIC_BENCH_STORE:-/tmp/dialectic-bench}"
  else
    "${bench[@]}" ${TASK[$name]} -c "$config" --concurrency 2 -o "$out" \
      --report "$results/$name.md" --store "${DIALECTIC_BENCH_STORE:-/tmp/dialectic-bench}"
  fi
done
