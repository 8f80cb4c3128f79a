"""Forward hooks (docs/python.md, "Hooks"): every name of every scheme, identity hooks leave the
logits bit for bit, and interventions give the logits of the same interventions in the twin
(normlab.to_torch) within the twin's rounding bound."""

import json
import math

import numpy as np
import pytest

import normlab

torch = pytest.importorskip("torch")  # Debian's python3-torch, installed by the bootstrap
from normlab import twin  # noqa: E402 (needs torch)
from test_torch import SCHEMES  # noqa: E402


def scheme_id(options):
    return options["scheme"] + ("_sinkhorn" if options.get("sinkhorn") else "")


def small(options, **more):
    return normlab.init(vocab=13, width=16, heads=2, layers=2, pos="rope", seed=9,
                        **{**options, **more})


def expected_names(model):
    """The hook names of docs/python.md's table for this model's resolved scheme (the twin's
    independent reading of the scheme table)."""
    cfg = twin.parse_config({"normlab_config": json.dumps(model.config)}, "model")
    rs = twin.resolve_scheme(cfg)
    per_layer = 2 if cfg["mlp"] else 1

    def norm(prefix, kind):
        scale = [prefix + ".hook_scale"] if (kind or cfg["norm"]) not in ("dyt", "derf") else []
        return scale + [prefix + ".hook_normalized"]

    names = norm("ln_embed", "") if rs.embed_norm else []
    names.append("hook_embed")
    for i, slots in enumerate(rs.sublayers):
        l, attention = i // per_layer, i % per_layer == 0
        b, kind, ln = f"blocks.{l}.", "attn" if attention else "mlp", "ln1" if attention else "ln2"
        if rs.residual_mode in ("attnres", "block_attnres"):
            names.append(b + kind + ".hook_res_weights")
        if rs.hyper:
            names.append(b + kind + ".hook_hc_weights")
        if attention and l > 0:
            names.append(f"blocks.{l - 1}.hook_resid_post")
        names.append(b + ("hook_resid_pre" if attention else "hook_resid_mid"))
        if slots.norm_in:
            names += norm(b + ln, slots.kind_in)
        names.append(b + kind + ".hook_in")
        if attention:
            names += [b + "attn." + n for n in ("hook_q", "hook_k", "hook_v", "hook_attn_scores",
                                                 "hook_pattern", "hook_z")]
        else:
            names += [b + "mlp.hook_pre", b + "mlp.hook_post"]
        names.append(b + f"hook_{kind}_out")
        if slots.norm_out:
            names += norm(b + ln + "_post", slots.kind_out)
        names.append(b + f"hook_{kind}_out_normed")
        if slots.norm_post:
            names += norm(b + ln + "_resid", slots.kind_post)
    if rs.residual_mode in ("attnres", "block_attnres"):
        names.append("final_res.hook_res_weights")
    names.append(f"blocks.{(len(rs.sublayers) - 1) // per_layer}.hook_resid_post")
    if rs.final_norm:
        names += norm("ln_final", "")
    return names


@pytest.mark.parametrize("options", SCHEMES, ids=scheme_id)
def test_every_scheme_has_every_hook_name(options):
    model = small(options)
    assert model.hook_names() == expected_names(model)


@pytest.mark.parametrize("options", SCHEMES, ids=scheme_id)
def test_identity_hooks_leave_the_logits_bit_for_bit(options):
    model = small(options, norm="layernorm" if options["scheme"] != "ngpt" else None)
    tokens = np.random.default_rng(0).integers(0, 13, size=(2, 9))
    plain = model.forward(tokens).view(np.uint32)
    for fn in (lambda x, hook: None, lambda x, hook: x.copy(), lambda x: x + 0.0):
        hooked = model.run_with_hooks(tokens, [(lambda name: True, fn)])
        np.testing.assert_array_equal(hooked.view(np.uint32), plain)


def keep_in(seen):
    """A hook that keeps a copy of each activation it sees, by name, and changes nothing."""
    def keep(x, hook):
        seen[hook.name] = x.copy()
    return keep


# Interventions written once for numpy (normlab's hooks) and torch (the twin's).
def is_torch(x):
    return isinstance(x, torch.Tensor)


def ablate_head0(x, hook):  # (B, T, H, dh): head 0 to zero, in place
    x[..., 0, :] = 0


def scale_head1(x, hook):
    x[..., 1, :] *= 3


def halve(x, hook):
    return x * 0.5


def double(x, hook):
    return x * 2


def tilt(x, hook):  # a ramp across features: no norm undoes it (a shift or a scale, some do)
    n = x.shape[-1]
    ramp = torch.linspace(-1, 1, n, dtype=x.dtype) if is_torch(x) else \
        np.linspace(-1, 1, n, dtype=np.float32)
    return x + ramp


def uniform_causal(x, hook):  # (B, H, T, T) -> each query attends equally to keys 0..t
    T = x.shape[-1]
    lib = torch if is_torch(x) else np
    ones = torch.ones(T, T, dtype=x.dtype) if is_torch(x) else np.ones((T, T), np.float32)
    counts = lib.arange(1, T + 1)[:, None]
    return x * 0 + lib.tril(ones) / (counts.to(x.dtype) if is_torch(x) else counts)


def mean_over_positions(x, hook):  # (B, T, D) -> each position gets the positions' mean
    mean = x.mean(1, keepdim=True) if is_torch(x) else x.mean(1, keepdims=True)
    return x * 0 + mean


def one_hot_embedding(x, hook):  # AttnRes weights (B, T, K): all on the embedding
    out = x * 0
    out[..., 0] = 1
    return out


INTERVENTIONS = {
    "resid": [("blocks.1.hook_resid_pre", tilt)],
    "z_head": [("blocks.0.attn.hook_z", ablate_head0)],
    "q_k_v": [("blocks.1.attn.hook_q", scale_head1), ("blocks.0.attn.hook_k", halve),
              ("blocks.1.attn.hook_v", ablate_head0)],
    "scores": [("blocks.0.attn.hook_attn_scores", halve)],
    "pattern": [("blocks.1.attn.hook_pattern", uniform_causal)],
    "attn_out": [("blocks.0.hook_attn_out", mean_over_positions)],
    "mlp": [("blocks.0.mlp.hook_post", halve), ("blocks.1.hook_mlp_out_normed", double)],
    "scales": [(lambda name: name.endswith("hook_scale"), double)],
    "normalized": [(lambda name: name.endswith("hook_normalized"), halve)],
}


def assert_hooked_logits_match(model, tokens, fwd_hooks):
    """normlab's hooked float32 logits against the hooked twin in float64, within
    test_torch's bound: sqrt(K) times the float32 twin's error plus eps32 of the logits."""
    t = torch.from_numpy(tokens)
    with torch.no_grad():
        ref = normlab.to_torch(model, torch.float64).run_with_hooks(t, fwd_hooks).numpy()
        twin32 = normlab.to_torch(model).run_with_hooks(t, fwd_hooks).numpy().astype(np.float64)
    ours = model.run_with_hooks(tokens, fwd_hooks).astype(np.float64)
    change = np.abs(ours - model.forward(tokens)).max()
    assert change > 1e-3 * np.abs(ours).max()  # the intervention does something
    cfg = twin.parse_config({"normlab_config": json.dumps(model.config)}, "model")
    K = twin.reduction_length(cfg, tokens.shape[0], tokens.shape[1], ref.size, backward=False)
    bound = math.sqrt(K) * (np.abs(twin32 - ref).max() + twin.EPS32 * np.abs(ref).max())
    assert np.abs(ours - ref).max() <= bound


@pytest.mark.parametrize("scheme", ["pre", "peri", "post", "ngpt"])
@pytest.mark.parametrize("intervention", sorted(INTERVENTIONS))
def test_interventions_match_the_twin(scheme, intervention):
    # init_std 0.3: attention far from uniform, so that each intervention moves the logits.
    model = small(dict(scheme=scheme), norm="layernorm" if scheme != "ngpt" else None,
                  init_std=0.3)
    tokens = np.random.default_rng(1).integers(0, 13, size=(2, 9))
    assert_hooked_logits_match(model, tokens, INTERVENTIONS[intervention])


@pytest.mark.parametrize("scheme", ["attnres", "block_attnres"])
def test_attnres_weights_intervention_matches_the_twin(scheme):
    model = small(dict(scheme=scheme), init_std=0.3,
                  **({"block_size": 2} if scheme == "block_attnres" else {}))
    tokens = np.random.default_rng(2).integers(0, 13, size=(2, 9))
    hooks = [("blocks.1.attn.hook_res_weights", one_hot_embedding)]
    assert_hooked_logits_match(model, tokens, hooks)
    # All weight on the embedding: the mixture entering block 1 is the embedding itself.
    _, cache = model.run_with_cache(tokens)
    seen = {}
    model.run_with_hooks(tokens, hooks + [("blocks.1.hook_resid_pre", keep_in(seen))])
    np.testing.assert_array_equal(seen["blocks.1.hook_resid_pre"], cache["hook_embed"])


def test_changed_scores_are_softmaxed_and_applied_to_v():
    model = small(dict(scheme="pre"))
    tokens = np.random.default_rng(3).integers(0, 13, size=(2, 7))
    seen = {}
    keep = keep_in(seen)

    def flat_scores(x, hook):  # every visible key the same score: a uniform causal pattern
        x[np.isfinite(x)] = 0

    model.run_with_hooks(tokens, [("blocks.0.attn.hook_attn_scores", flat_scores),
                                  ("blocks.0.attn.hook_v", keep),
                                  ("blocks.0.attn.hook_pattern", keep),
                                  ("blocks.0.attn.hook_z", keep)])
    pattern, v, z = (seen["blocks.0.attn." + n] for n in ("hook_pattern", "hook_v", "hook_z"))
    uniform = np.tril(np.ones((7, 7))) / np.arange(1, 8)[:, None]
    np.testing.assert_allclose(pattern, np.broadcast_to(uniform, pattern.shape), rtol=2e-7)
    # z_t = the mean of v over keys 0..t, per head.
    prefix_mean = np.cumsum(v.astype(np.float64), axis=1) / np.arange(1, 8)[None, :, None, None]
    np.testing.assert_allclose(z, prefix_mean, rtol=1e-5, atol=1e-6)


def test_scores_are_scaled_q_dot_k_with_the_causal_mask():
    model = small(dict(scheme="pre"))
    tokens = np.random.default_rng(4).integers(0, 13, size=(1, 6))
    _, cache = model.run_with_cache(tokens)
    q = cache["blocks.1.attn.hook_q"].astype(np.float64)  # (B, T, H, dh)
    k = cache["blocks.1.attn.hook_k"].astype(np.float64)
    scores = np.einsum("bthe,bshe->bhts", q, k) / math.sqrt(8)
    got = cache["blocks.1.attn.hook_attn_scores"]
    assert np.all(np.isneginf(got[..., np.triu_indices(6, 1)[0], np.triu_indices(6, 1)[1]]))
    lower = np.tril_indices(6)
    np.testing.assert_allclose(got[..., lower[0], lower[1]], scores[..., lower[0], lower[1]],
                               rtol=1e-5, atol=1e-6)
    exp = np.exp(got - got.max(-1, keepdims=True))
    np.testing.assert_allclose(cache["blocks.1.attn.hook_pattern"],
                               exp / exp.sum(-1, keepdims=True), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("causal", [True, False])
def test_alibi_scores_hold_the_bias_and_match_the_twin(causal):
    model = normlab.init(vocab=13, width=16, heads=2, layers=2, pos="alibi", causal=causal,
                         init_std=0.3, seed=9)
    tokens = np.random.default_rng(5).integers(0, 13, size=(2, 9))
    assert_hooked_logits_match(model, tokens, INTERVENTIONS["scores"])
    # Zero queries: the scores are the bias alone, m_h (-|t - s| + 0.5 [s < t] bidirectional),
    # slopes 2^-4 and 2^-8 for two heads (Press et al.'s get_slopes).
    seen = {}
    model.run_with_hooks(tokens, [("blocks.0.attn.hook_q", lambda x: np.zeros_like(x)),
                                  ("blocks.0.attn.hook_attn_scores", keep_in(seen))])
    t, s = np.arange(9)[:, None], np.arange(9)[None, :]
    bias = -np.abs(t - s) + (0 if causal else 0.5 * (s < t))
    want = np.array([2.0 ** -4, 2.0 ** -8])[:, None, None] * bias
    got = seen["blocks.0.attn.hook_attn_scores"][0]  # (H, T, T)
    visible = np.broadcast_to(s <= t if causal else np.ones((9, 9), bool), got.shape)
    np.testing.assert_allclose(got[visible], np.broadcast_to(want, got.shape)[visible], rtol=1e-6)


@pytest.mark.parametrize("causal", [True, False])
def test_relative_scores_match_the_twin(causal):
    # The twin computes Transformer-XL's terms with the reference's shifted (T, 2T) product.
    model = normlab.init(vocab=13, width=16, heads=2, layers=2, pos="relative", causal=causal,
                         init_std=0.3, seed=9)
    tokens = np.random.default_rng(5).integers(0, 13, size=(2, 9))
    assert_hooked_logits_match(model, tokens, INTERVENTIONS["scores"])


def test_a_doubled_scale_halves_the_normalized_rows():
    model = small(dict(scheme="pre"))  # rmsnorm: y = x / scale * g
    tokens = np.random.default_rng(5).integers(0, 13, size=(2, 5))
    _, cache = model.run_with_cache(tokens)
    x = cache["blocks.0.hook_resid_pre"].astype(np.float64)
    eps = model.config["norm_eps"]
    np.testing.assert_allclose(cache["blocks.0.ln1.hook_scale"][..., 0],
                               np.sqrt((x ** 2).mean(-1) + eps), rtol=1e-6)
    seen = {}
    model.run_with_hooks(tokens, [
        ("blocks.0.ln1.hook_scale", double),
        ("blocks.0.ln1.hook_normalized", keep_in(seen))])
    np.testing.assert_allclose(seen["blocks.0.ln1.hook_normalized"], cache["blocks.0.ln1.hook_normalized"] / 2, rtol=1e-6)


def test_hyper_connection_weights_are_what_the_streams_mix_with():
    n = 3
    model = small(dict(scheme="hyper_connections"), streams=n, init_std=0.3)
    tokens = np.random.default_rng(6).integers(0, 13, size=(2, 5))
    plain = model.forward(tokens)
    _, cache = model.run_with_cache(tokens)
    assert cache["blocks.0.attn.hook_hc_weights"].shape == (2, 5, n * (n + 2))
    changed = model.run_with_hooks(tokens, [("blocks.1.mlp.hook_hc_weights", tilt)])
    assert np.abs(changed - plain).max() > 1e-4
    # The first sublayer's streams are all the embedding: its input is (Σ A_m) times it.
    seen = {}
    model.run_with_hooks(tokens, [("blocks.0.attn.hook_hc_weights", halve),
                                  ("blocks.0.hook_resid_pre", keep_in(seen))])
    weight = cache["blocks.0.attn.hook_hc_weights"][..., :n].sum(-1, keepdims=True) * 0.5
    np.testing.assert_allclose(seen["blocks.0.hook_resid_pre"], weight * cache["hook_embed"], rtol=1e-5, atol=1e-6)


def test_unbatched_tokens_and_ragged_rows():
    model = small(dict(scheme="peri"))
    shapes = {}
    model.run_with_hooks([1, 2, 3], [(lambda name: True, keep_in(shapes))])
    assert shapes["blocks.0.attn.hook_pattern"].shape == (2, 3, 3)
    assert shapes["blocks.0.ln1.hook_scale"].shape == (3, 1)
    rows = [[1, 2, 3], [4, 5, 6, 7, 8]]
    hooks = [("blocks.0.attn.hook_z", ablate_head0)]
    both = model.run_with_hooks(rows, hooks)
    for b, row in enumerate(rows):
        alone = model.run_with_hooks(np.array([row]), hooks)[0]
        np.testing.assert_array_equal(both[b, :len(row)], alone)


def test_hook_errors_name_the_problem():
    model = small(dict(scheme="pre"))
    tokens = np.array([[1, 2, 3]])
    with pytest.raises(ValueError, match="no hook point 'blocks.0.attn.hook_patern'.*"
                                         "blocks.0.attn.hook_pattern"):
        model.run_with_hooks(tokens, [("blocks.0.attn.hook_patern", halve)])
    with pytest.raises(ValueError, match=r"returned shape \[1, 3\]; allowed.*\[1, 3, 16\]"):
        model.run_with_hooks(tokens, [("hook_embed", lambda x, hook: x[..., 0])])
    with pytest.raises(ValueError, match="fwd_hooks entry"):
        model.run_with_hooks(tokens, ["hook_embed"])
    with pytest.raises(ZeroDivisionError):  # a hook's own error reaches the caller
        model.run_with_hooks(tokens, [("hook_embed", lambda x, hook: 1 / 0)])
    np.testing.assert_array_equal(model.run_with_hooks(tokens), model.forward(tokens))


def test_names_filter_and_layer():
    model = small(dict(scheme="pre"))
    _, cache = model.run_with_cache([[1, 2]], names_filter=lambda n: n.endswith("hook_q"))
    assert sorted(cache) == ["blocks.0.attn.hook_q", "blocks.1.attn.hook_q"]
    layers = []

    def note_layer(x, hook):
        layers.append(hook.layer())

    model.run_with_hooks([[1, 2]], [(lambda n: n.endswith("hook_z"), note_layer)])
    assert layers == [0, 1]


# Gradients at the hook points (docs/python.md, "Gradients").

GRADIENT_SCHEMES = [s for s in SCHEMES if s["scheme"] not in
                    ("resi_dual", "siamesenorm", "hyper_connections")]  # the twin's hooks


def twin_activation_grads(model, tokens, targets, dtype):
    """The twin's loss and dL/d(activation) at every hook name, by autograd."""
    module = normlab.to_torch(model, dtype)
    kept = {}

    def keep(x, hook):
        x.retain_grad()
        kept[hook.name] = x

    logits = module.run_with_hooks(torch.from_numpy(tokens), [(lambda name: True, keep)])
    V = logits.shape[-1]
    scored = torch.from_numpy(targets >= 0)
    target = torch.nn.functional.one_hot(torch.from_numpy(targets).clamp(min=0), V).to(dtype)
    loss = twin.soft_cross_entropy(logits, target * scored[..., None], scored.to(dtype))
    loss.backward()
    return loss.item(), {n: (t.grad.numpy() if t.grad is not None else np.zeros(t.shape))
                         for n, t in kept.items()}


@pytest.mark.parametrize("options", GRADIENT_SCHEMES, ids=scheme_id)
def test_activation_gradients_match_torch_autograd(options):
    """Each gradient of normlab's float32 backward against the twin's in float64, within the
    twin's bound: sqrt(K) times the float32 twin's error plus eps32 of the gradient's size, K
    the backward's roundings (twin.reduction_length). The AttnRes weights have no gradient."""
    model = small(options, init_std=0.3)
    rng = np.random.default_rng(7)
    tokens = rng.integers(0, 13, size=(2, 9))
    targets = rng.integers(0, 13, size=(2, 9))
    targets[0, :3] = -1  # unscored positions
    loss, grads = model.backward_with_cache(tokens, targets)
    ref_loss, ref = twin_activation_grads(model, tokens, targets, torch.float64)
    _, twin32 = twin_activation_grads(model, tokens, targets, torch.float32)
    assert loss == pytest.approx(ref_loss, rel=1e-5)
    assert set(grads) == {n for n in model.hook_names() if not n.endswith("hook_res_weights")}
    cfg = twin.parse_config({"normlab_config": json.dumps(model.config)}, "model")
    for name, g in grads.items():
        assert g.shape == ref[name].shape, name
        K = twin.reduction_length(cfg, 2, 9, g.size, backward=True)
        bound = math.sqrt(K) * (np.abs(twin32[name] - ref[name]).max()
                                + twin.EPS32 * np.abs(ref[name]).max())
        assert np.abs(g - ref[name]).max() <= bound, name


def test_activation_gradients_of_ragged_rows_and_their_final_norm():
    model = small(dict(scheme="pre"), init_std=0.3)
    tokens = np.array([[1, 2, 3, 0, 0], [4, 5, 6, 7, 8]])
    targets = np.array([[2, 3, -1, 0, 0], [5, 6, 7, 8, 9]])
    mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], bool)
    loss, grads = model.backward_with_cache(tokens, targets, mask=mask)
    # Scored positions: 2 in row 0, 5 in row 1; the loss is their mean, so each row's
    # gradients are its own loss's times its share of the scored positions.
    loss0, g0 = model.backward_with_cache(tokens[:1, :3], targets[:1, :3])
    loss1, g1 = model.backward_with_cache(tokens[1:], targets[1:])
    assert loss == pytest.approx((2 * loss0 + 5 * loss1) / 7, rel=1e-6)
    for name in ("blocks.1.hook_resid_mid", "ln_final.hook_scale"):
        np.testing.assert_allclose(grads[name][0, :3], 2 / 7 * g0[name][0], rtol=1e-5, atol=1e-9)
        assert np.all(grads[name][0, 3:] == 0)
        np.testing.assert_allclose(grads[name][1], 5 / 7 * g1[name][0], rtol=1e-5, atol=1e-9)
    pattern = "blocks.0.attn.hook_pattern"  # (B, H, T, T): queries and keys padded
    np.testing.assert_allclose(grads[pattern][0, :, :3, :3], 2 / 7 * g0[pattern][0], rtol=1e-5,
                               atol=1e-9)
    # The unscored position reaches no final norm: its gradient there is 0.
    assert np.all(g0["ln_final.hook_normalized"][0, 2] == 0)
