#!/usr/bin/env bash
# Scripted demo (no model, no compile): a debate on examples/rate-limiter.md against the fake OpenAI-compatible
# server that ships with dialectic (deterministic scripted replies, no network, no key).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${VENV_BIN:-$root/.venv/bin}"
work="$(mktemp -d "${TMPDIR:-/tmp}/dialectic-demo.XXXXXX")"
server_out="$work/server.out"

"$bin/python" -m dialectic.testing.fake_server --latency 0.05 >"$server_out" &
server_pid=$!

stop_server() {
  kill "$server_pid" 2>/dev/null || true
  wait "$server_pid" 2>/dev/null || true
}
trap stop_server EXIT

url=""
for _ in $(seq 1 100); do
  url="$(head -n 1 "$server_out" 2>/dev/null || true)"
  [ -n "$url" ] && break
  kill -0 "$server_pid" 2>/dev/null || break
  sleep 0.1
done
if [ -z "$url" ]; then
  echo "demo: the fake LLM server did not start" >&2
  exit 1
fi

export OPENAI_BASE_URL="$url/v1"
export OPENAI_API_KEY="demo"
export DIALECTIC_HOME="$work/store"

cd "$root"
echo "== Solution (stdout) ==" >&2
"$bin/dialectic" debate \
  --problem-file examples/rate-limiter.md \
  --config examples/fake-server-config.json \
  --report "$work/report.md"
echo >&2
echo "Report: $work/report.md" >&2
echo "Store:  $DIALECTIC_HOME (try: DIALECTIC_HOME=$DIALECTIC_HOME $bin/dialectic list)" >&2
