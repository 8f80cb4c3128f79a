#!/usr/bin/env bash
# Whether two normlab binaries give the same bits: each of seven schemes (pre, post, peri, ngpt,
# attnres, block_attnres with blocks of 2 and 3) is initialized once by OLD, then trained a few
# AdamW steps on random tokens by OLD and by NEW from that same checkpoint; the two checkpoints
# must be byte-identical. This is how a kernel change that claims to be bit-identical is shown
# to be (docs/performance.md); bench/binary_compare.sh then shows whether it is faster.
#
# Usage: bench/binary_bits.sh OLD_BINARY NEW_BINARY
# The model and batch come from the environment, so that one change can be checked at the
# shapes its code paths take:
#   VOCAB (64), WIDTH (64), HEADS (4), LAYERS (4), BATCH (7), SEQ (41), STEPS (5),
#   CAUSAL (1; 0 for bidirectional attention), POS (none; or learned, sinusoidal, rope),
#   THREADS (1).
# Prints one line per scheme that differs and a count; exits 1 if any differs.
set -euo pipefail
OLD=$1
NEW=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
causal=()
[[ ${CAUSAL:-1} == 1 ]] && causal=(--causal)
identical=0 different=0
for spec in "pre" "post" "peri" "ngpt" "attnres" "block_attnres --block-size 2" \
  "block_attnres --block-size 3"; do
  name=${spec// /_}
  # shellcheck disable=SC2086  # spec holds the scheme and its options
  "$OLD" init --scheme $spec --norm rmsnorm --vocab "${VOCAB:-64}" --width "${WIDTH:-64}" \
    --heads "${HEADS:-4}" --layers "${LAYERS:-4}" "${causal[@]}" --untied --pos "${POS:-none}" \
    --out "$dir/$name.init" >/dev/null
  for side in OLD NEW; do
    "${!side}" train-steps --checkpoint "$dir/$name.init" --out "$dir/$name.$side" \
      --steps "${STEPS:-5}" --batch "${BATCH:-7}" --seq-len "${SEQ:-41}" \
      --threads "${THREADS:-1}" >/dev/null
  done
  if diff -rq "$dir/$name.OLD" "$dir/$name.NEW" >/dev/null; then
    identical=$((identical + 1))
  else
    different=$((different + 1))
    echo "different: $spec"
  fi
done
echo "identical $identical, different $different"
[[ $different == 0 ]]
