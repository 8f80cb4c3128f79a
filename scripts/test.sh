#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite (CTest).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
jobs=$(getconf _NPROCESSORS_ONLN)
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$jobs"
ctest --test-dir build --output-on-failure -j"$jobs"
# The fuzz harnesses under AddressSanitizer and UndefinedBehaviorSanitizer: a separate build
# with clang (docs/reliability.md).
cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=clang++ \
  -DNORMLAB_FUZZ=ON
cmake --build build-fuzz -j"$jobs"
ctest --test-dir build-fuzz --output-on-failure -j"$jobs"
