#!/usr/bin/env bash
# On the GPU machine: keep the model pieces a call carried (.w/NAME.gguf.NN) under $WORK, where the
# next calls of the same machine find them, and say what has arrived.
set -euo pipefail
cd "$(dirname "$0")/../.."
work="${WORK:-/tmp/w}"
mkdir -p "$work"
for piece in .w/*.gguf.[0-9]*; do [ -f "$piece" ] && cp "$piece" "$work/"; done
echo "pieces: $(ls "$work" | wc -l) bytes: $(du -sb "$work" | cut -f1)"
