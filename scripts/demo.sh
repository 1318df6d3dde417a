#!/usr/bin/env bash
# The README's first command: a real debate on the embedded local model (no key, no server).
# Two agents on the 0.5B model and a judge on the 1.5B, one round, on examples/rate-limiter.md
# (examples/local-demo.json; the README's demo paragraph says why); prints the solution on
# stdout and the report's path on stderr. Fails (exit 1) when the judge's solution is mostly
# the problem restated: then the demo has shown nothing worth reading.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${VENV_BIN:-$root/.venv/bin}"
work="$(mktemp -d "${TMPDIR:-/tmp}/dialectic-demo.XXXXXX")"
export DIALECTIC_HOME="${DIALECTIC_HOME:-$work/store}"
problem="examples/rate-limiter.md"

cd "$root"
echo "Running a debate on the embedded model (its file is joined and verified once, then cached)..." >&2
echo "== Solution (stdout) ==" >&2
"$bin/dialectic" debate \
  --problem-file "$problem" \
  --config examples/local-demo.json \
  --report "$work/report.md" | tee "$work/solution.md"
echo >&2
echo "Report: $work/report.md" >&2
echo "Store:  $DIALECTIC_HOME (try: DIALECTIC_HOME=$DIALECTIC_HOME $bin/dialectic list)" >&2

# The same check the engine warns with (dialectic.similarity.detectors.restatement), here made fatal.
"$bin/python" - "$work/solution.md" "$problem" "$work/report.md" <<'PY'
import sys
from pathlib import Path

from dialectic.similarity.detectors import MIN_NOVELTY, restatement

solution, problem = (Path(name).read_text(encoding="utf-8") for name in sys.argv[1:3])
check = restatement(solution, problem)
if check.restates:
    sys.exit(
        f"demo failed: the judge's solution mostly restates the problem: {check.novelty:.0%} of its content "
        f"words are new (at least {MIN_NOVELTY:.0%} expected). The agents' turns are in {sys.argv[3]}."
    )
print(f"Check:  not the problem restated ({check.novelty:.0%} of the solution's content words are new)", file=sys.stderr)
# Replies cut off at the token limit are marked in the report; said here, not fatal (sampling varies run to run).
cut = Path(sys.argv[3]).read_text(encoding="utf-8").count("truncated by the token limit")
print(f"Check:  {'no reply cut off' if cut == 0 else f'{cut} replies cut off at the token limit'}", file=sys.stderr)
PY
