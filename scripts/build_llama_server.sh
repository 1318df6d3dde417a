#!/usr/bin/env bash
# Builds llama.cpp's own `llama-server` from the llama.cpp tree that llama-cpp-python's source
# distribution carries (the same release the `local` extra pins), once, and caches the binary.
#
# Prints the binary's path on stdout. The cache is
#   ${DIALECTIC_CACHE:-${XDG_CACHE_HOME:-~/.cache}/dialectic}/llama-server/<version>/
# so a second run (and CI on the same machine) takes no time. About 15 minutes on 2 cores the first
# time. Offline: curl and OpenSSL are off, and the web UI assets the build would fetch are left out
# (the server works without them).
set -euo pipefail

PYTHON="${PYTHON:-python3}"
# The release the `local` extra pins (dialectic.llm.local_models.LLAMA_CPP_REQUIREMENT, which a test keeps
# equal to pyproject.toml), so the binary serves the same llama.cpp as the library; the tests look for it
# under the same version. Without dialectic importable (PYTHON not the venv's), the pin as of writing.
VERSION="${LLAMA_CPP_PYTHON_VERSION:-$("$PYTHON" -c 'from dialectic.llm.local_models import LLAMA_CPP_REQUIREMENT as r; print(r.partition("==")[2])' 2>/dev/null || echo 0.3.36)}"
CACHE_ROOT="${DIALECTIC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dialectic}"
TARGET_DIR="$CACHE_ROOT/llama-server/$VERSION"
BINARY="$TARGET_DIR/llama-server"
# Compiled for this CPU but without the AMX tile code, which faults at the first matrix product on CPUs that
# report AMX inside a virtual machine (see the Makefile's LLAMA_NO_AMX). A binary cached with other flags
# (the stamp beside it says which) is built again.
NO_AMX="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
FLAGS="native;$NO_AMX"
STAMP="$TARGET_DIR/build-flags"

built() { [ -x "$BINARY" ] && [ "$(cat "$STAMP" 2>/dev/null)" = "$FLAGS" ] && "$BINARY" --version >/dev/null 2>&1; }

if built; then
	echo "$BINARY"
	exit 0
fi

mkdir -p "$TARGET_DIR"
exec 9>"$TARGET_DIR/.lock"
flock 9
if built; then # built by a run we waited for
	echo "$BINARY"
	exit 0
fi

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
echo "build_llama_server: fetching the llama-cpp-python $VERSION source distribution" >&2
"$PYTHON" -m pip download --quiet --no-binary :all: --no-deps "llama-cpp-python==$VERSION" -d "$WORK" >&2
tar -xzf "$WORK"/llama_cpp_python-"$VERSION".tar.gz -C "$WORK"
TREE="$WORK/llama_cpp_python-$VERSION/vendor/llama.cpp"
test -d "$TREE/tools/server" || {
	echo "build_llama_server: no tools/server in the llama.cpp tree of llama-cpp-python $VERSION" >&2
	exit 1
}

echo "build_llama_server: compiling llama-server (about 15 minutes on 2 cores)" >&2
JOBS="$(nproc 2>/dev/null || echo 2)"
cmake -S "$TREE" -B "$WORK/build" -DCMAKE_BUILD_TYPE=Release -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF \
	-DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DGGML_NATIVE=ON \
	-DBUILD_SHARED_LIBS=OFF -DCMAKE_C_FLAGS="$NO_AMX" -DCMAKE_CXX_FLAGS="$NO_AMX" >&2
cmake --build "$WORK/build" --target llama-server -j "$JOBS" >&2

cp "$WORK/build/bin/llama-server" "$BINARY.tmp"
mv "$BINARY.tmp" "$BINARY"
echo "$FLAGS" >"$STAMP"
"$BINARY" --version >&2 || true
echo "$BINARY"
