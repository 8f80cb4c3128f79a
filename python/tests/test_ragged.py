"""Batches as users have them (docs/python.md, "Ragged batches"): rows of different lengths as
a list or padded with a mask give each row's own results; int32 or int64, any memory order."""

import numpy as np
import pytest

import normlab

EPS32 = np.finfo(np.float32).eps


@pytest.fixture(params=[True, False], ids=["causal", "bidirectional"])
def model(request):
    return normlab.init(scheme="peri", vocab=11, width=16, heads=2, layers=2,
                        causal=request.param, pos="rope", seed=3)


def rows():
    rng = np.random.default_rng(5)
    return [rng.integers(0, 11, size=n) for n in (5, 9, 3, 9)]


def test_a_ragged_list_gives_each_row_its_own_logits(model):
    seqs = rows()
    logits = model.forward(seqs)
    assert logits.shape == (4, 9, 11)
    for i, s in enumerate(seqs):
        alone = model.forward(s[None, :])[0]
        assert logits[i, :len(s)].tobytes() == alone.tobytes()
        assert not logits[i, len(s):].any()  # zero at the padding


def test_padding_with_a_mask_ignores_the_padded_values(model):
    seqs = rows()
    tokens = np.full((4, 9), 7, np.int64)  # padding of a real token id: it must not leak in
    mask = np.zeros((4, 9), bool)
    for i, s in enumerate(seqs):
        tokens[i, :len(s)] = s
        mask[i, :len(s)] = True
    assert model.forward(tokens, mask=mask).tobytes() == model.forward(seqs).tobytes()
    logits, cache = model.run_with_cache(tokens, mask=mask)
    for i, s in enumerate(seqs):
        alone_logits, alone = model.run_with_cache(s[None, :])
        n = len(s)
        assert logits[i, :n].tobytes() == alone_logits[0].tobytes()
        pattern = cache["blocks.1.attn.hook_pattern"][i]
        assert pattern[:, :n, :n].tobytes() == alone["blocks.1.attn.hook_pattern"][0].tobytes()
        assert not pattern[:, n:].any() and not pattern[:, :, n:].any()
        resid = cache["blocks.0.hook_resid_post"][i, :n]
        assert resid.tobytes() == alone["blocks.0.hook_resid_post"][0].tobytes()


def test_bad_masks_are_refused(model):
    tokens = np.zeros((2, 4), np.int32)
    with pytest.raises(ValueError, match="after each row"):
        model.forward(tokens, mask=np.array([[0, 1, 1, 1], [1, 1, 1, 1]]))
    with pytest.raises(ValueError, match="shape"):
        model.forward(tokens, mask=np.ones((2, 3)))


def test_ragged_gradients_are_the_weighted_rows():
    """A causal model's padded batch (weight 0 at the padding) is the same loss: the padding
    comes after every scored position. The two differ by float32 rounding of sums over the
    batch's B·T rows and the width D: at most (B·T + D) · eps32 of the largest gradient."""
    model = normlab.init(scheme="peri", vocab=11, width=16, heads=2, layers=2, causal=True,
                         pos="rope", seed=3)
    seqs = rows()
    B, T = 4, 9
    tokens = np.zeros((B, T), np.int64)
    targets = np.full((B, T), -1, np.int64)
    mask = np.zeros((B, T), bool)
    for i, s in enumerate(seqs):
        tokens[i, :len(s)] = s
        targets[i, :len(s) - 1] = s[1:]
        mask[i, :len(s)] = True
    loss, grads = model.grads(tokens, targets, mask=mask)
    ref_loss, ref = model.grads(tokens, targets, weight=mask.astype(np.float32))
    bound = (B * T + 16) * EPS32
    assert abs(loss - ref_loss) <= bound * abs(ref_loss)
    for name, g in ref.items():
        assert np.abs(grads[name] - g).max() <= bound * np.abs(g).max() + 1e-30, name


def test_token_dtypes_and_memory_order_agree(model):
    tokens = np.random.default_rng(2).integers(0, 11, size=(3, 7))
    base = model.forward(tokens.astype(np.int32))
    assert model.forward(tokens.astype(np.int64)).tobytes() == base.tobytes()
    assert model.forward(np.asfortranarray(tokens)).tobytes() == base.tobytes()
    wide = np.zeros((3, 14), np.int64)
    wide[:, ::2] = tokens
    assert model.forward(wide[:, ::2]).tobytes() == base.tobytes()  # a strided view
