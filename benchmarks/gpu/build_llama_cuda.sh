#!/usr/bin/env bash
# Build llama.cpp's llama-server for CUDA (Hopper, sm_90) on a machine with no GPU and no CUDA install,
# for benchmarks/gpu/device_runs.sh: the compiler, headers and libraries come from NVIDIA's CUDA 13.0
# wheels on PyPI, the source is the llama.cpp tree inside llama-cpp-python's sdist (the version the
# embedded model uses). The binary links cuBLAS and the CUDA runtime dynamically (the GPU machine's
# PyTorch brings both) and is written to .w/bin/ with the OpenMP runtime beside it, in lib/, and
# gzipped to .w/llama-server.gz (18 MB instead of 41: it travels beside the tree in one call, and
# benchmarks/gpu/receive.sh unpacks it on the GPU machine, where the later calls find it).
# Two cores take about an hour; the result is cached under $DIALECTIC_CACHE/llama-server-cuda/.
#   benchmarks/gpu/build_llama_cuda.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
version=0.3.36
cache="${DIALECTIC_CACHE:-$HOME/.cache/dialectic}/llama-server-cuda/$version"
work="${BUILD_DIR:-/tmp/llama-cuda-build}"
if [ ! -x "$cache/llama-server" ]; then
  mkdir -p "$work/wheels" "$work/cuda"
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.11 -d "$work/wheels" \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 --platform manylinux_2_12_x86_64 \
    nvidia-cuda-nvcc==13.0.88 nvidia-cuda-runtime==13.0.96 nvidia-cuda-cccl==13.0.85 \
    nvidia-cuda-crt==13.0.88 nvidia-nvvm==13.0.88 nvidia-cublas==13.1.0.3
  for wheel in "$work"/wheels/*.whl; do python3 -m zipfile -e "$wheel" "$work/cuda"; done
  cuda="$work/cuda/nvidia/cu13"
  chmod +x "$cuda"/bin/* "$cuda"/nvvm/bin/*
  for lib in cudart cublas cublasLt; do ln -sf "lib$lib.so.13" "$cuda/lib/lib$lib.so"; done
  ln -sfn lib "$cuda/lib64"
  python3 -m pip download -q --no-deps --no-binary=:all: -d "$work" "llama-cpp-python==$version"
  tar -xzf "$work/llama_cpp_python-$version.tar.gz" -C "$work"
  src="$work/llama_cpp_python-$version/vendor/llama.cpp"
  # FlashAttention off: its kernels are most of the compile time, and the small models don't need them
  PATH="$cuda/bin:$PATH" cmake -S "$src" -B "$src/build-cuda" -DCMAKE_BUILD_TYPE=Release \
    -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90-real -DCMAKE_CUDA_COMPILER="$cuda/bin/nvcc" \
    -DCUDAToolkit_ROOT="$cuda" -DGGML_CUDA_FA=OFF -DGGML_CUDA_NCCL=OFF -DGGML_CUDA_NO_VMM=ON \
    -DGGML_NATIVE=OFF -DBUILD_SHARED_LIBS=OFF -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF
  PATH="$cuda/bin:$PATH" cmake --build "$src/build-cuda" --target llama-server -j "$(nproc)"
  mkdir -p "$cache"
  strip -o "$cache/llama-server" "$src/build-cuda/bin/llama-server"
fi
mkdir -p .w/bin/lib
cp "$cache/llama-server" .w/bin/
cp "$(gcc -print-file-name=libgomp.so.1)" .w/bin/lib/
gzip -9 -c .w/bin/llama-server >.w/llama-server.gz
ls -la .w/bin .w/bin/lib
