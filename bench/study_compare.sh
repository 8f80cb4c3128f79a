#!/usr/bin/env bash
# Wall time of one study under two normlab binaries, alternating A and B in each round so that
# load from other work on the machine hits both alike, each into a fresh folder; then whether
# the two wrote the same results.csv and curves.csv, byte for byte. For speed changes whose
# gain shows in a study's whole run (its own model, data and evaluation) rather than a preset.
#
# Usage: bench/study_compare.sh OLD_BINARY NEW_BINARY ROUNDS FILE [RUN OPTIONS ...]
# e.g. the Chomsky-hierarchy encoder on reverse_string, 300 steps of batch 128, one job:
#   bench/study_compare.sh OLD NEW 3 experiments/chomsky_hierarchy.toml --tier quick \
#     --set 'task.name="reverse_string"' --set train.steps=300 --set train.batch=128 \
#     --set train.checkpoint_every=300 --jobs 1
set -euo pipefail
A=$1
B=$2
ROUNDS=$3
FILE=$4
shift 4
PY=/usr/bin/python3
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

echo "$FILE $*; load average $(cut -d' ' -f1-3 /proc/loadavg); OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}"
as=() bs=()
seconds() {  # BINARY FOLDER [RUN OPTIONS ...]: wall seconds of one run of the study into FOLDER
  local bin=$1 dir=$2 start end
  shift 2
  start=$(date +%s.%N)
  "$bin" run "$FILE" "$@" --out "$dir" >"$dir.log" 2>&1 || { cat "$dir.log" >&2; exit 1; }
  end=$(date +%s.%N)
  $PY -c "print(f'{$end - $start:.2f}')"
}
for ((r = 1; r <= ROUNDS; r++)); do
  rm -rf "$OUT/a" "$OUT/b"
  a=$(seconds "$A" "$OUT/a" "$@")
  b=$(seconds "$B" "$OUT/b" "$@")
  as+=("$a") bs+=("$b")
  printf 'round %d: A %.2f s  B %.2f s  B/A %.3f\n' "$r" "$a" "$b" "$($PY -c "print($b / $a)")"
done
for f in results.csv curves.csv; do
  if cmp -s "$OUT/a/$f" "$OUT/b/$f"; then echo "$f: the same bytes"; else echo "$f: DIFFERENT"; fi
done
$PY - "${as[*]}" "${bs[*]}" <<'PYEOF'
import statistics, sys
a = [float(x) for x in sys.argv[1].split()]
b = [float(x) for x in sys.argv[2].split()]
ma, mb = statistics.median(a), statistics.median(b)
print(f"median A {ma:.2f} s, median B {mb:.2f} s, B/A {mb / ma:.3f}")
PYEOF
