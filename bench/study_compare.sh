#!/usr/bin/env bash
# Wall time of one study under two normlab binaries, alternating A and B in each round so that
# load from other work on the machine hits both alike, each into a fresh folder; then whether
# the two wrote the same results.csv and curves.csv, byte for byte. For speed changes whose
# gain shows in a study's whole run (its own model, data and evaluation) rather than a preset.
# Each round also prints the training steps per second between the first and the last record
# of metrics.jsonl that has a rate (set train.log_every below train.steps): the steps alone,
# without the start, the validations and the evaluation that the wall time includes.
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
as=() bs=() ras=() rbs=()
seconds() {  # BINARY FOLDER [RUN OPTIONS ...]: wall seconds of one run of the study into FOLDER
  local bin=$1 dir=$2 start end
  shift 2
  start=$(date +%s.%N)
  "$bin" run "$FILE" "$@" --out "$dir" >"$dir.log" 2>&1 || { cat "$dir.log" >&2; exit 1; }
  end=$(date +%s.%N)
  $PY -c "print(f'{$end - $start:.2f}')"
}
# Steps per second between the first and last rated records of FOLDER's runs: a record's
# steps_per_s counts from the trainer's start, so step / steps_per_s is its time since then.
step_rate() {
  $PY - "$1" <<'PYEOF'
import glob, json, sys
recs = [json.loads(line) for f in sorted(glob.glob(sys.argv[1] + "/runs/*/metrics.jsonl"))
        for line in open(f) if "steps_per_s" in line]
if len(recs) < 2 or recs[-1]["step"] == recs[0]["step"]:
    print("nan")
else:
    first, last = recs[0], recs[-1]
    t = lambda r: r["step"] / r["steps_per_s"]
    print(f"{(last['step'] - first['step']) / (t(last) - t(first)):.3f}")
PYEOF
}
for ((r = 1; r <= ROUNDS; r++)); do
  rm -rf "$OUT/a" "$OUT/b"
  a=$(seconds "$A" "$OUT/a" "$@")
  b=$(seconds "$B" "$OUT/b" "$@")
  as+=("$a") bs+=("$b")
  ra=$(step_rate "$OUT/a") rb=$(step_rate "$OUT/b")
  ras+=("$ra") rbs+=("$rb")
  printf 'round %d: A %.2f s  B %.2f s  B/A %.3f;  steps/s A %s  B %s  B/A %.3f\n' "$r" "$a" "$b" \
    "$($PY -c "print($b / $a)")" "$ra" "$rb" "$($PY -c "print($rb / $ra)")"
done
for f in results.csv curves.csv; do
  if cmp -s "$OUT/a/$f" "$OUT/b/$f"; then echo "$f: the same bytes"; else echo "$f: DIFFERENT"; fi
done
$PY - "${as[*]}" "${bs[*]}" "${ras[*]}" "${rbs[*]}" <<'PYEOF'
import statistics, sys
a, b, ra, rb = ([float(x) for x in arg.split()] for arg in sys.argv[1:5])
ma, mb = statistics.median(a), statistics.median(b)
print(f"median A {ma:.2f} s, median B {mb:.2f} s, B/A {mb / ma:.3f}")
ma, mb = statistics.median(ra), statistics.median(rb)
print(f"training steps: median A {ma:.3f} steps/s, median B {mb:.3f} steps/s, B/A {mb / ma:.3f}")
PYEOF
