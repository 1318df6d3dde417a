#!/usr/bin/env bash
# On the GPU machine: keep what a call carried under $WORK, where the next calls of the same machine
# find it (/tmp keeps between calls; an ignored path a call carried is gone by the next call), so
# that a call carries one thing beside the working tree, under the 64 MiB a call moves: a model
# piece (.w/NAME.gguf.NN), the checksums (.w/*.sha256), the wheels (.w/whl), or the CUDA
# llama-server (.w/llama-server.gz and .w/bin/lib), unpacked into $WORK/bin/. Says what has arrived.
set -euo pipefail
cd "$(dirname "$0")/../.."
work="${WORK:-/tmp/w}"
mkdir -p "$work"
shopt -s nullglob
for carried in .w/*.gguf.[0-9]* .w/*.sha256; do mv "$carried" "$work/"; done
mkdir -p "$work/whl" "$work/bin/lib"
for wheel in .w/whl/*.whl; do cp "$wheel" "$work/whl/"; done
if [ -f .w/llama-server.gz ]; then
  gzip -dc .w/llama-server.gz >"$work/bin/llama-server" && chmod +x "$work/bin/llama-server"
  for lib in .w/bin/lib/*; do cp "$lib" "$work/bin/lib/"; done
fi
pieces=("$work"/*.gguf.[0-9]*)
sums=("$work"/*.sha256)
wheels=("$work"/whl/*.whl)
echo "pieces: ${#pieces[@]} bytes: $(cat /dev/null "${pieces[@]}" | wc -c) checksums: ${#sums[@]} wheels: ${#wheels[@]}" \
  "llama-server: $([ -x "$work/bin/llama-server" ] && stat -c %s "$work/bin/llama-server" || echo none)"
