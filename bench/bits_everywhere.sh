#!/usr/bin/env bash
# The same bits from every build and every OpenBLAS kernel set (docs/training.md,
# "Determinism"): the builds BUILDS (folders with a normlab binary; default build, build-v3 and,
# if present, build-v4) each train every scheme of the table from the same checkpoints
# (bench/binary_bits.sh), causal and bidirectional, on 1 and 2 threads, with OPENBLAS_CORETYPE
# unset, Prescott and Haswell (and SkylakeX on a CPU with AVX-512); and each runs the quick
# study (experiments/quick.toml) and a Set Complement quick study at width 31 (whose q|k|v
# product is gemm.cpp's), whose results.csv must be byte-identical.
#
# Usage: bench/bits_everywhere.sh [BUILD ...]
# Make the builds first, e.g.
#   cmake -S . -B build-v3 -G Ninja -DNORMLAB_ARCH=x86-64-v3 -DNORMLAB_PYTHON=OFF
#   cmake --build build-v3 --target normlab
# (x86-64-v4 only where the CPU has AVX-512). Exits 1 if anything differs.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ $# -gt 0 ]]; then
  builds=("$@")
else
  builds=(build build-v3)
  [[ -x build-v4/normlab ]] && builds+=(build-v4)
fi
for b in "${builds[@]}"; do
  [[ -x $b/normlab ]] || { echo "bits_everywhere: $b/normlab not built" >&2; exit 2; }
done
coretypes=(Prescott Haswell)
grep -q avx512f /proc/cpuinfo && coretypes+=(SkylakeX)
ref=${builds[0]}/normlab
failed=0
for b in "${builds[@]}"; do
  for env in "" "${coretypes[@]/#/OPENBLAS_CORETYPE=}"; do
    [[ $b == "${builds[0]}" && -z $env ]] && continue  # the reference itself
    for causal in 1 0; do
      for threads in 1 2; do
        printf '%-10s %-28s causal %s, %s thread(s): ' "$b" "${env:-OPENBLAS_CORETYPE unset}" \
          "$causal" "$threads"
        if ! NEW_ENV="$env" CAUSAL=$causal THREADS=$threads bench/binary_bits.sh "$ref" \
          "$b/normlab" | tail -1; then
          failed=1
        fi
      done
    done
  done
done
# The quick study and a wider Set Complement study, each build once with OpenBLAS's default
# and once under Prescott: results.csv byte for byte.
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for study in "experiments/quick.toml" \
  "experiments/resharpen_set_complement.toml --tier quick --set seeds=[1] --set train.steps=2000"; do
  hashes=()
  for b in "${builds[@]}"; do
    for env in "" "OPENBLAS_CORETYPE=Prescott"; do
      dir=$out/$(basename "$b")${env:+_prescott}
      rm -rf "$dir"
      # shellcheck disable=SC2086  # the study and its options, word-split on purpose
      env $env "$b/normlab" run $study --out "$dir" >/dev/null 2>"$dir.log" ||
        { cat "$dir.log" >&2; exit 1; }
      hashes+=("$(sha256sum "$dir/results.csv" | cut -d' ' -f1)  $b ${env:-default}")
    done
  done
  printf '%s\n' "${hashes[@]}"
  if [[ $(printf '%s\n' "${hashes[@]}" | cut -d' ' -f1 | sort -u | wc -l) == 1 ]]; then
    echo "results.csv identical: ${study%% *}"
  else
    echo "results.csv DIFFERENT: ${study%% *}"
    failed=1
  fi
done
[[ $failed == 0 ]] && echo "bits_everywhere: every build and kernel set gave the same bits"
exit $failed
