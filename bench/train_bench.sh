#!/usr/bin/env bash
# Training steps per second, normlab (`normlab bench train`) against the PyTorch twin
# (`bench/twin.py --bench`), both on one thread, same preset (model, batch, length, AdamW,
# clipping). Rounds alternate normlab and the twin so that load from other work on the machine
# hits both alike; the ratio of the medians is the figure of issue 2's targets, and the ratio
# of each round's pair is printed too, to show the spread.
#
# Usage: bench/train_bench.sh [PRESET] [ROUNDS]      (defaults minimal and 3)
# Needs a Release build in build/ (NORMLAB=PATH for another binary) and Debian's python3-torch
# (/usr/bin/python3). NORMLAB_ENV and TWIN_ENV hold assignments for one side's environment
# alone: the comparison a user meets on a CPU that OpenBLAS does not know is
#   NORMLAB_ENV=OPENBLAS_CORETYPE=Prescott TWIN_ENV=OPENBLAS_CORETYPE=Haswell   (or SkylakeX)
# normlab as shipped on such a CPU against the twin at the best kernel of the CPU's family.
set -euo pipefail
cd "$(dirname "$0")/.."
PRESET=${1:-minimal}
ROUNDS=${2:-3}
BIN=${NORMLAB:-build/normlab}
PY=/usr/bin/python3

[[ -x $BIN ]] || { echo "train_bench: $BIN not built" >&2; exit 1; }
$PY -c "import torch" 2>/dev/null || { echo "train_bench: $PY has no torch (apt install python3-torch)" >&2; exit 1; }

field() { $PY -c "import json, sys; print(json.load(sys.stdin)['$1'])"; }

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(getconf _NPROCESSORS_ONLN) cores; load average $(cut -d' ' -f1-3 /proc/loadavg); OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}; normlab env: ${NORMLAB_ENV:-none}; twin env: ${TWIN_ENV:-none}"
ours=() twins=()
for ((r = 1; r <= ROUNDS; r++)); do
  # shellcheck disable=SC2086  # the assignments, word-split on purpose
  json=$(env ${NORMLAB_ENV:-} $BIN bench train --preset "$PRESET" --threads 1 --json)
  n=$(field steps_per_s <<<"$json")
  # shellcheck disable=SC2086
  t=$(env ${TWIN_ENV:-} $PY bench/twin.py --bench "$PRESET" --json | field steps_per_s)
  ours+=("$n") twins+=("$t")
  printf 'round %d: normlab %.1f steps/s (%.1f GFLOP/s, %.0f%% of SGEMM peak %.1f)  twin %.1f steps/s  ratio %.2f\n' \
    "$r" "$n" "$(field gflops <<<"$json")" "$($PY -c "print(100 * $(field fraction_of_sgemm_peak <<<"$json"))")" \
    "$(field sgemm_peak_gflops <<<"$json")" "$t" "$($PY -c "print($n / $t)")"
done
$PY - "${ours[*]}" "${twins[*]}" "$PRESET" <<'PYEOF'
import statistics, sys
ours = [float(x) for x in sys.argv[1].split()]
twins = [float(x) for x in sys.argv[2].split()]
o, t = statistics.median(ours), statistics.median(twins)
print(f"{sys.argv[3]}: median normlab {o:.1f} steps/s, median twin {t:.1f} steps/s, ratio {o / t:.2f}")
PYEOF
