#!/usr/bin/env bash
# Whether two normlab binaries give the same bits: every scheme of the scheme table (README,
# "Schemes"; `custom` as a placement, `hyper_connections` also with --sinkhorn) is initialized
# by OLD and by NEW (the two checkpoints must be byte-identical: the same layout, drawn in the
# same order), then trained a few AdamW steps on random tokens by OLD and by NEW from that same
# checkpoint; the two checkpoints must be byte-identical. Then both print the logits of OLD's
# trained model on one sequence of SEQ tokens, by the training pass and by the inference pass
# (`normlab forward --rows`: streaming attention, the last layers on three listed rows only;
# one thread); the outputs must be identical too (skipped, and said, when OLD has no --rows).
# This is how a change that claims to be bit-identical is shown to be (docs/performance.md),
# and how two builds (AVX-512 and AVX2, any -march) or two OpenBLAS kernel sets are shown to
# give the same training (bench/bits_everywhere.sh, docs/training.md "Determinism").
#
# Usage: bench/binary_bits.sh OLD_BINARY NEW_BINARY
# The model and batch come from the environment, so that one change can be checked at the
# shapes its code paths take:
#   VOCAB (64), WIDTH (64), HEADS (4), LAYERS (4), BATCH (7), SEQ (41), STEPS (5),
#   CAUSAL (1; 0 for bidirectional attention), POS (none; or learned, sinusoidal, rope),
#   THREADS (1), NORM (rmsnorm), SCHEMES (every scheme; or a list such as "pre post").
#   OLD_ENV and NEW_ENV: assignments for each side's environment, e.g.
#   NEW_ENV="OPENBLAS_CORETYPE=Prescott".
# A scheme OLD does not have (`OLD schemes`) is not compared, and said.
# Prints one line per scheme that differs and a count; exits 1 if any differs.
set -euo pipefail
OLD=$1
NEW=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
causal=()
[[ ${CAUSAL:-1} == 1 ]] && causal=(--causal)
ALL_SCHEMES=("pre" "post" "peri" "peri_init" "post_attn" "mix --mix-layers 2" "ngpt"
  "sqrt_scaling" "deepnorm" "attnres" "block_attnres --block-size 2"
  "block_attnres --block-size 3" "sandwich" "pre_and_post" "reordered" "layernorm_scaling"
  "layerscale" "rezero" "hybridnorm" "resi_dual" "siamesenorm" "hyper_connections"
  "hyper_connections --sinkhorn" "resformer" "custom --placement attn:in+out;mlp:post")
if [[ -n ${SCHEMES:-} ]]; then
  read -r -a list <<<"$SCHEMES"
else
  list=("${ALL_SCHEMES[@]}")
fi
identical=0 different=0
inference=1
if ! "$OLD" forward --help 2>/dev/null | grep -q -- --rows; then
  inference=0
  echo "inference pass not compared: $OLD has no forward --rows"
fi
seq_len=${SEQ:-41}
tokens=$(awk -v n="$seq_len" -v v="${VOCAB:-64}" 'BEGIN { for (i = 0; i < n; i++) printf "%d ", (i * 37 + 11) % v }')
rows="0 $((seq_len / 2)) $((seq_len - 1))"
known=$("$OLD" schemes 2>/dev/null || true)
skipped=0
for spec in "${list[@]}"; do
  name=${spec//[ :;+]/_}
  if ! grep -Eq "^${spec%% *}[:(]" <<<"$known"; then  # a scheme added after OLD was built
    echo "not compared: $OLD has no scheme ${spec%% *}"
    skipped=$((skipped + 1))
    continue
  fi
  for side in OLD NEW; do
    # shellcheck disable=SC2086  # spec holds the scheme and its options
    "${!side}" init --scheme $spec --norm "${NORM:-rmsnorm}" --vocab "${VOCAB:-64}" \
      --width "${WIDTH:-64}" --heads "${HEADS:-4}" --layers "${LAYERS:-4}" "${causal[@]}" \
      --untied --pos "${POS:-none}" --out "$dir/$name.init.$side" >/dev/null
  done
  same=1
  diff -rq "$dir/$name.init.OLD" "$dir/$name.init.NEW" >/dev/null || same=0
  mv "$dir/$name.init.OLD" "$dir/$name.init"
  for side in OLD NEW; do
    env_name=${side}_ENV
    # shellcheck disable=SC2086  # the side's assignments, word-split on purpose
    env ${!env_name:-} "${!side}" train-steps --checkpoint "$dir/$name.init" \
      --out "$dir/$name.$side" --steps "${STEPS:-5}" --batch "${BATCH:-7}" \
      --seq-len "${SEQ:-41}" --threads "${THREADS:-1}" >/dev/null
  done
  diff -rq "$dir/$name.OLD" "$dir/$name.NEW" >/dev/null || same=0
  if [[ $inference == 1 && $same == 1 ]]; then
    for side in OLD NEW; do
      env_name=${side}_ENV
      # shellcheck disable=SC2086  # the side's assignments, word-split on purpose
      env ${!env_name:-} "${!side}" forward \
        --checkpoint "$dir/$name.OLD" --tokens "$tokens" >"$dir/$name.$side.train.json"
      # shellcheck disable=SC2086
      env ${!env_name:-} "${!side}" forward \
        --checkpoint "$dir/$name.OLD" --tokens "$tokens" --rows "$rows" >"$dir/$name.$side.rows.json"
    done
    cmp -s "$dir/$name.OLD.train.json" "$dir/$name.NEW.train.json" || same=0
    cmp -s "$dir/$name.OLD.rows.json" "$dir/$name.NEW.rows.json" || same=0
  fi
  if [[ $same == 1 ]]; then
    identical=$((identical + 1))
  else
    different=$((different + 1))
    echo "different: $spec"
  fi
done
echo "identical $identical, different $different, not compared $skipped"
[[ $different == 0 ]]
