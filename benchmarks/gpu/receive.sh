#!/usr/bin/env bash
# On the GPU machine: keep the model pieces a call carried (.w/NAME.gguf.NN) under $WORK, where the
# next calls of the same machine find them, unpack a carried .w/llama-server.gz into .w/bin/, and say
# what has arrived.
set -euo pipefail
cd "$(dirname "$0")/../.."
work="${WORK:-/tmp/w}"
mkdir -p "$work"
for piece in .w/*.gguf.[0-9]*; do [ -f "$piece" ] && mv "$piece" "$work/"; done
if [ .w/llama-server.gz -nt .w/bin/llama-server ]; then
  mkdir -p .w/bin && gzip -dc .w/llama-server.gz >.w/bin/llama-server && chmod +x .w/bin/llama-server
  echo "llama-server: $(stat -c %s .w/bin/llama-server) bytes"
fi
echo "pieces: $(ls "$work" | wc -l) bytes: $(du -sb "$work" | cut -f1)"
