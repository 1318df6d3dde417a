#!/usr/bin/env bash
# Debate vs. one answer vs. self-consistency, on the local model, 30 arithmetic problems.
# Extra arguments are passed on, e.g.: benchmarks/bench_local.sh --operands 4 --report local.md
set -euo pipefail
exec dialectic bench arithmetic -n 30 --provider local --arms single,self-consistency,debate:3x2 "$@"
