#!/usr/bin/env bash
# Wall time of every study in experiments/ as a user runs it: `normlab run FILE` with the file's
# default tier (quick where the file has tiers) and its own `jobs`, each into a fresh folder
# OUT/NAME-quick (tiered) or OUT/NAME, so that `normlab claims run --tier quick --out OUT`
# afterwards reuses those runs and only evaluates. Prints one table row per study.
#
# Usage: bench/studies_time.sh OUT [FILE ...]   (default: every experiments/*.toml)
#        NORMLAB_BIN=PATH to time another binary (default build/normlab)
set -euo pipefail
OUT=${1:?usage: bench/studies_time.sh OUT [FILE ...]}
shift
FILES=("$@")
if ((${#FILES[@]} == 0)); then FILES=(experiments/*.toml); fi
BIN=${NORMLAB_BIN:-build/normlab}
mkdir -p "$OUT"

echo "$(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg);" \
  "OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}; $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "| study | folder | runs | wall |"
echo "| --- | --- | --- | --- |"
for file in "${FILES[@]}"; do
  name=$(basename "$file" .toml)
  folder="$OUT/$name"
  if grep -q '^\[tier\.quick' "$file"; then folder="$OUT/$name-quick"; fi
  if [[ -e "$folder" ]]; then
    echo "$folder exists: remove it first, or it would be resumed rather than timed" >&2
    exit 1
  fi
  start=$(date +%s.%N)
  if ! "$BIN" run "$file" --out "$folder" >"$folder.log" 2>&1; then
    echo "$name failed; see $folder.log" >&2
    exit 1
  fi
  end=$(date +%s.%N)
  # Training studies keep a folder per run; particle studies a summary row per run.
  if [[ ! -e "$folder/particles_summary.csv" ]]; then
    runs=$(find "$folder/runs" -mindepth 1 -maxdepth 1 -type d | wc -l)
  else
    runs=$(($(wc -l <"$folder/particles_summary.csv") - 1))
  fi
  printf '| %s | %s | %d | %.1f s |\n' "$name" "$(basename "$folder")" "$runs" \
    "$(/usr/bin/python3 -c "print($end - $start)")"
done
