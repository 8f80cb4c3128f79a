#!/usr/bin/env bash
# Re-runs one seed of a kept full-tier study (docs/full-tier/) with this build and compares its
# rows of results.csv with the kept ones, byte for byte: whether this machine reproduces the
# ledger's tables (docs/claims.md, "Checking a kept table"). normlab's training and evaluation
# give the same bits on every x86-64 CPU with AVX2 (docs/training.md, "Determinism"), so the
# rows must be identical. The particle studies have no results.csv and are not checked here
# (bench/particles_bits.sh compares their trajectories).
#
# Usage: scripts/check_kept_table.sh FOLDER [SEED]
#   FOLDER  a folder of docs/full-tier, e.g. resharpen_width-full or
#           resharpen_tomita-full__task.n=1
#   SEED    the seed to re-run (default 1); every variant of the study runs with it
# Runs the study's own experiment.toml (the copy kept beside its tables) at the full tier with
# the kept --set options and seeds = [SEED], into a temporary folder (printed; kept on failure).
# Prints both hashes; exits 0 if the rows are identical, 1 if not. NORMLAB=PATH runs another
# binary than build/normlab.
set -euo pipefail
cd "$(dirname "$0")/.."
FOLDER=${1:?usage: scripts/check_kept_table.sh FOLDER [SEED]}
SEED=${2:-1}
KEPT=docs/full-tier/$FOLDER
BIN=${NORMLAB:-build/normlab}  # NORMLAB: another build's binary
[[ -d $KEPT ]] || { echo "check_kept_table: no folder $KEPT (ls docs/full-tier)" >&2; exit 2; }
[[ -f $KEPT/results.csv ]] || { echo "check_kept_table: $KEPT has no results.csv (a particle study?)" >&2; exit 2; }
[[ -x $BIN ]] || { echo "check_kept_table: $BIN not built (scripts/quickstart.sh)" >&2; exit 1; }
[[ $SEED =~ ^[0-9]+$ ]] || { echo "check_kept_table: SEED must be a number: $SEED" >&2; exit 2; }

sets=()
while IFS= read -r s; do sets+=(--set "$s"); done < <(/usr/bin/python3 -c \
  'import json, sys; [print(s) for s in json.load(open(sys.argv[1]))["sets"]]' "$KEPT/ledger_study.json")
out=$(mktemp -d /tmp/normlab_check_XXXXXX)
echo "check_kept_table: $FOLDER, seed $SEED, into $out"
"$BIN" run "$KEPT/experiment.toml" --tier full "${sets[@]}" --set "seeds=[$SEED]" --out "$out/run"

# The header and the rows of that seed (column 5), in the kept file's order.
rows() { awk -F, -v seed="$SEED" 'NR == 1 || $5 == seed' "$1"; }
kept_hash=$(rows "$KEPT/results.csv" | sha256sum | cut -d' ' -f1)
new_hash=$(rows "$out/run/results.csv" | sha256sum | cut -d' ' -f1)
kept_rows=$(($(rows "$KEPT/results.csv" | wc -l) - 1))
echo "kept:    $kept_hash  ($kept_rows rows of seed $SEED)"
echo "re-run:  $new_hash  ($(($(rows "$out/run/results.csv" | wc -l) - 1)) rows)"
if [[ $kept_hash == "$new_hash" ]]; then
  echo "identical: this machine reproduces $FOLDER"
  rm -rf "$out"
else
  echo "different: the rows that differ (kept < > re-run):"
  diff <(rows "$KEPT/results.csv") <(rows "$out/run/results.csv") | head -20 || true
  echo "(re-run kept in $out)"
  exit 1
fi
