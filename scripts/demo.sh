#!/usr/bin/env bash
# The README's first command: a real debate on the embedded local model (no key, no server).
# Two agents and a judge, one round, on examples/rate-limiter.md; prints the solution on
# stdout and the report's path on stderr.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${VENV_BIN:-$root/.venv/bin}"
work="$(mktemp -d "${TMPDIR:-/tmp}/dialectic-demo.XXXXXX")"
export DIALECTIC_HOME="${DIALECTIC_HOME:-$work/store}"

cd "$root"
echo "Running a debate on the embedded model (its file is joined and verified once, then cached)..." >&2
echo "== Solution (stdout) ==" >&2
"$bin/dialectic" debate \
  --problem-file examples/rate-limiter.md \
  --config examples/local-demo.json \
  --report "$work/report.md"
echo >&2
echo "Report: $work/report.md" >&2
echo "Store:  $DIALECTIC_HOME (try: DIALECTIC_HOME=$DIALECTIC_HOME $bin/dialectic list)" >&2
