#!/usr/bin/env bash
# Training steps per second of two normlab binaries on the same preset (`normlab bench train`,
# one thread), alternating A and B in each round so that load from other work on the machine
# hits both alike: how a refactor is shown not to slow training. Prints each round and the
# ratio of the medians (B / A).
#
# Usage: bench/binary_compare.sh OLD_BINARY NEW_BINARY [PRESET] [ROUNDS]   (minimal, 5)
# BENCH_ARGS: more options of `normlab bench train` for both sides, e.g.
#   BENCH_ARGS="--scheme block_attnres --block-size 2 --layers 32 --width 64 --seconds 6"
set -euo pipefail
A=$1
B=$2
PRESET=${3:-minimal}
ROUNDS=${4:-5}
PY=/usr/bin/python3
field() { $PY -c "import json, sys; print(json.load(sys.stdin)['$1'])"; }

echo "preset $PRESET ${BENCH_ARGS:-}; load average $(cut -d' ' -f1-3 /proc/loadavg); OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}"
as=() bs=()
for ((r = 1; r <= ROUNDS; r++)); do
  # shellcheck disable=SC2086  # BENCH_ARGS holds several options
  a=$("$A" bench train --preset "$PRESET" --threads 1 ${BENCH_ARGS:-} --json | field steps_per_s)
  # shellcheck disable=SC2086
  b=$("$B" bench train --preset "$PRESET" --threads 1 ${BENCH_ARGS:-} --json | field steps_per_s)
  as+=("$a") bs+=("$b")
  printf 'round %d: A %.1f steps/s  B %.1f steps/s  B/A %.3f\n' "$r" "$a" "$b" "$($PY -c "print($b / $a)")"
done
$PY - "${as[*]}" "${bs[*]}" "$PRESET" <<'PYEOF'
import statistics, sys
a = [float(x) for x in sys.argv[1].split()]
b = [float(x) for x in sys.argv[2].split()]
ma, mb = statistics.median(a), statistics.median(b)
print(f"{sys.argv[3]}: median A {ma:.1f} steps/s, median B {mb:.1f} steps/s, B/A {mb / ma:.3f}")
PYEOF
