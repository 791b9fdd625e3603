#!/usr/bin/env bash
# Build llama.cpp's `llama-server` (the peer of benchmarks/peer_throughput.py) from the llama.cpp sources
# vendored in the llama-cpp-python sdist on PyPI: no network but the package registry, nothing installed.
#
#     bash benchmarks/build_llama_server.sh          # about 4-8 minutes on 2 cores; prints the binary's path
#
# The binary lands in data/cache/llama.cpp/build/bin/llama-server (ignored by git); a second call reuses it.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION="${LLAMA_CPP_PYTHON_VERSION:-0.3.36}"
ROOT=data/cache/llama.cpp
BIN="$ROOT/build/bin/llama-server"
if [ -x "$BIN" ]; then echo "$BIN"; exit 0; fi
mkdir -p "$ROOT"
if [ ! -d "$ROOT/src" ]; then
  .venv/bin/python -m pip download --quiet --no-deps --no-binary :all: -d "$ROOT/sdist" "llama-cpp-python==$VERSION" >&2
  mkdir -p "$ROOT/src"
  tar -xzf "$ROOT"/sdist/llama_cpp_python-*.tar.gz -C "$ROOT/src" --strip-components=1
fi
cmake -S "$ROOT/src/vendor/llama.cpp" -B "$ROOT/build" -DCMAKE_BUILD_TYPE=Release -DLLAMA_CURL=OFF \
  -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=ON -DGGML_NATIVE=ON >&2
cmake --build "$ROOT/build" --target llama-server -j "$(nproc)" >&2
echo "$BIN"
