#!/usr/bin/env bash
# Whether two normlab binaries integrate the particle dynamics to the same bits: each setting
# below (every product path of src/particles/dynamics.cpp: Q = K = V = I, one and two heads of
# random weights, per-layer weights, causal, the Schur coordinates of symmetric init) is run by
# OLD and by NEW, and the two CSVs of observations (17 significant digits: equal exactly when
# the doubles are) must be identical. How two builds (AVX-512 and AVX2) are shown to give the
# same particle trajectories (docs/training.md, "Determinism").
#
# Usage: bench/particles_bits.sh OLD_BINARY NEW_BINARY
# OLD_ENV and NEW_ENV: assignments for each side's environment, e.g.
# NEW_ENV="OPENBLAS_CORETYPE=Prescott". Prints one line per setting that differs and a count;
# exits 1 if any differs.
set -euo pipefail
OLD=$1
NEW=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
SETTINGS=(
  "--scheme peri --init random --n 24 --d 40 --beta 4"
  "--scheme post --init random --n 24 --d 16 --qkv kaiming"
  "--scheme pre --init cone --n 20 --d 12 --qkv gaussian --heads 2"
  "--scheme mix --init random --n 16 --d 24 --qkv kaiming --qkv-depth tied --causal"
  "--scheme ngpt --init symmetric --n 8 --d 12 --qkv kaiming --qkv-depth tied"
  "--scheme sqrt_scaling --init random --n 16 --d 8 --integrator dopri5"
)
identical=0 different=0
for i in "${!SETTINGS[@]}"; do
  for side in OLD NEW; do
    env_name=${side}_ENV
    # shellcheck disable=SC2086  # the setting's options and the side's assignments, word-split
    env ${!env_name:-} "${!side}" particles ${SETTINGS[$i]} --seed 3 --t-end 2 \
      --record-every 0.25 --csv "$dir/$i.$side.csv" >/dev/null
  done
  if cmp -s "$dir/$i.OLD.csv" "$dir/$i.NEW.csv"; then
    identical=$((identical + 1))
  else
    different=$((different + 1))
    echo "differs: particles ${SETTINGS[$i]}"
  fi
done
echo "particles: $identical identical, $different different"
[[ $different == 0 ]]
