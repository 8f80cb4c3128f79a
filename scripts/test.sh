#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite (CTest), then the suite's
# checks for other machines (docs/reliability.md, "On every CPU").
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
# Another CPU's BLAS: the tests whose reference or subject calls OpenBLAS (the PyTorch twin, the
# particle dynamics' Schur form, the probes' eigen-solvers) again with the SSE3 kernels Debian 12's
# OpenBLAS runs on a CPU it does not know.
OPENBLAS_CORETYPE=Prescott ctest --test-dir build --output-on-failure -j"$jobs" \
  -R 'TwinCrossCheck|TwinCheck|Dynamics|Integrate|Rk4|Dopri5|Observables|SymmetricPaperSize|EffectiveRank|DepthProbe|python_package'
# A build for every AVX2 CPU (-march=x86-64-v3) where this one has AVX-512: its kernel, model,
# optimizer, twin and bits tests (NORMLAB_TESTS=kernels), the same checkpoints as this build for
# every scheme (bench/binary_bits.sh) and the same particle trajectories (bench/particles_bits.sh).
# Without AVX-512, build/ already is such a build.
if grep -qw avx512f /proc/cpuinfo; then
  cmake -S . -B build-v3 -G Ninja -DCMAKE_BUILD_TYPE=Release -DNORMLAB_ARCH=x86-64-v3 \
    -DNORMLAB_PYTHON=OFF -DNORMLAB_TESTS=kernels
  cmake --build build-v3 -j"$jobs" --target normlab normlab_tests
  ctest --test-dir build-v3 --output-on-failure -j"$jobs"
  for causal in 1 0; do
    CAUSAL=$causal THREADS=2 bench/binary_bits.sh build/normlab build-v3/normlab
  done
  bench/particles_bits.sh build/normlab build-v3/normlab
else
  echo "test.sh: this CPU has no AVX-512: build/ is the AVX2 build, no second build is needed"
fi
