#!/usr/bin/env bash
# Prepare .w/ (git-ignored) for benchmarks/gpu/device_runs.sh on a GPU machine that can reach nothing:
# each model cut into pieces small enough for one transfer each (.w/NAME.gguf.NN) with its SHA-256,
# and the wheels of its dependencies for the machine's Python 3.12.
#   benchmarks/gpu/pack.sh [PIECE_MIB] [MODEL...]     (default: 32 qwen2.5-0.5b qwen2.5-1.5b)
# A piece and the working tree travel together in one call, under 64 MiB: keep PIECE_MIB below 64
# less the size of the tracked files (19 MiB on 2026-11-26, 28 MiB on 2026-11-27, 37 MiB on 2026-11-28,
# most of it results files).
set -euo pipefail
cd "$(dirname "$0")/../.."
piece="${1:-32}"
shift || true
models=("${@:-qwen2.5-0.5b qwen2.5-1.5b}")
rm -rf .w/*.gguf.[0-9]* .w/*.sha256 && mkdir -p .w/whl
for name in ${models[*]}; do
  model="${DIALECTIC_CACHE:-$HOME/.cache/dialectic}/models/$name.gguf"
  split -d -a 2 -b "${piece}M" "$model" ".w/$name.gguf."
  sha256sum "$model" | cut -d' ' -f1 >".w/$name.gguf.sha256"
done
wanted=$(.venv/bin/python - <<'PY'
import importlib.metadata as md, re
seen, todo = set(), ["dialectic-debate"]
while todo:
    name = todo.pop()
    key = name.lower().replace("_", "-")
    if key in seen:
        continue
    seen.add(key)
    try:
        todo += [re.split(r"[ <>=!;\[~(]", r)[0] for r in md.distribution(name).requires or [] if "extra ==" not in r]
    except md.PackageNotFoundError:
        seen.discard(key)
on_machine = {"dialectic-debate", "jinja2", "markupsafe", "pyyaml", "colorama"}
print(" ".join(f"{k}=={md.version(k)}" for k in sorted(seen - on_machine)))
PY
)
for spec in $wanted gguf; do
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    -d .w/whl "$spec"
done
ls -la .w
