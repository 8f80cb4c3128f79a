#!/usr/bin/env bash
# Training steps per second of one run with 1 thread and with N threads (`normlab bench train
# --threads`), alternating in each round so that load from other work hits both alike. Prints
# each round and the ratio of the medians (N threads / 1 thread). Results are bit-identical at
# any thread count (tests/train/determinism_test.cpp), so only the speed differs.
#
# Usage: bench/threads_bench.sh [PRESET] [ROUNDS] [THREADS]   (small, 3, 2)
#        NORMLAB_BIN=PATH to time another binary (default build/normlab)
set -euo pipefail
PRESET=${1:-small}
ROUNDS=${2:-3}
THREADS=${3:-2}
BIN=${NORMLAB_BIN:-build/normlab}
PY=/usr/bin/python3
field() { $PY -c "import json, sys; print(json.load(sys.stdin)['$1'])"; }

echo "preset $PRESET; $(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg);" \
  "OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}"
ones=() ns=()
for ((r = 1; r <= ROUNDS; r++)); do
  one=$("$BIN" bench train --preset "$PRESET" --threads 1 --json | field steps_per_s)
  n=$("$BIN" bench train --preset "$PRESET" --threads "$THREADS" --json | field steps_per_s)
  ones+=("$one") ns+=("$n")
  printf 'round %d: 1 thread %.2f steps/s  %d threads %.2f steps/s  ratio %.2f\n' "$r" "$one" \
    "$THREADS" "$n" "$($PY -c "print($n / $one)")"
done
$PY - "${ones[*]}" "${ns[*]}" "$PRESET" "$THREADS" <<'PYEOF'
import statistics, sys
one = [float(x) for x in sys.argv[1].split()]
n = [float(x) for x in sys.argv[2].split()]
m1, mn = statistics.median(one), statistics.median(n)
print(f"{sys.argv[3]}: median 1 thread {m1:.2f} steps/s, {sys.argv[4]} threads {mn:.2f} steps/s, "
      f"ratio {mn / m1:.2f}")
PYEOF
