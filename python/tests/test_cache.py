"""run_with_cache: names, shapes, and the activations recomputed from each other in numpy
(test_hooks.py checks every name of every scheme)."""

import numpy as np
import pytest

import normlab


def rms_norm(x, gain, eps):
    return x / np.sqrt((x.astype(np.float64) ** 2).mean(-1, keepdims=True) + eps) * gain


def test_pre_scheme_cache_is_consistent():
    model = normlab.init(scheme="pre", vocab=7, width=8, heads=2, layers=2, seed=5)
    p, eps = model.parameters(), model.config["norm_eps"]
    tokens = np.array([[1, 2, 3, 4, 5, 6], [6, 5, 4, 3, 2, 1]])
    logits, cache = model.run_with_cache(tokens)
    np.testing.assert_array_equal(logits, model.forward(tokens))
    expected = {"hook_embed", "ln_final.hook_normalized"}
    for l in range(2):
        b = f"blocks.{l}."
        expected |= {b + "hook_resid_pre", b + "attn.hook_in", b + "hook_attn_out",
                     b + "hook_attn_out_normed", b + "attn.hook_pattern", b + "attn.hook_z",
                     b + "hook_resid_mid", b + "mlp.hook_in", b + "hook_mlp_out",
                     b + "hook_mlp_out_normed", b + "hook_resid_post"}
    assert list(cache) == model.hook_names() and expected <= set(cache)
    np.testing.assert_array_equal(cache["hook_embed"], p["embed.weight"][tokens])
    for l in range(2):
        b = f"blocks.{l}."
        assert cache[b + "hook_resid_pre"].shape == (2, 6, 8)
        assert cache[b + "attn.hook_pattern"].shape == (2, 2, 6, 6)
        assert cache[b + "attn.hook_z"].shape == (2, 6, 2, 4)
        # pre: u = N(x), x' = x + f(u)
        np.testing.assert_allclose(
            cache[b + "attn.hook_in"],
            rms_norm(cache[b + "hook_resid_pre"], p[f"layers.{l}.attn.norm_in.weight"], eps),
            rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(cache[b + "hook_resid_mid"],
                                   cache[b + "hook_resid_pre"] + cache[b + "hook_attn_out"],
                                   rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(cache[b + "hook_resid_post"],
                                   cache[b + "hook_resid_mid"] + cache[b + "hook_mlp_out"],
                                   rtol=1e-6, atol=1e-6)
        pattern = cache[b + "attn.hook_pattern"]
        np.testing.assert_allclose(pattern.sum(-1), 1.0, rtol=1e-5)
        assert np.all(np.triu(pattern, k=1) == 0.0)  # causal
        # attention output = heads (B, T, H, dh) concatenated times o^T
        z = cache[b + "attn.hook_z"].reshape(2, 6, 8)
        np.testing.assert_allclose(z @ p[f"layers.{l}.attn.o.weight"].T,
                                   cache[b + "hook_attn_out"], rtol=1e-4, atol=1e-6)
    final = cache["ln_final.hook_normalized"]
    np.testing.assert_allclose(final, rms_norm(cache["blocks.1.hook_resid_post"],
                                               p["final_norm.weight"], eps), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(final @ p["unembed.weight"].T, logits, rtol=1e-4, atol=1e-5)


def test_peri_out_norm_and_unbatched_tokens():
    model = normlab.init(scheme="peri", vocab=7, width=8, layers=1, mlp=False, seed=2)
    p, eps = model.parameters(), model.config["norm_eps"]
    logits, cache = model.run_with_cache([1, 2, 3])
    assert logits.shape == (3, 7) and cache["blocks.0.attn.hook_pattern"].shape == (1, 3, 3)
    np.testing.assert_allclose(
        cache["blocks.0.hook_attn_out_normed"],
        rms_norm(cache["blocks.0.hook_attn_out"], p["layers.0.attn.norm_out.weight"], eps),
        rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(cache["blocks.0.hook_resid_post"],
                               cache["blocks.0.hook_resid_pre"] +
                               cache["blocks.0.hook_attn_out_normed"], rtol=1e-6, atol=1e-6)


def test_cache_agrees_with_the_depth_probe(checkpoint, tmp_path):
    """`normlab probe depth` on random tokens: per-sublayer RMS of the stream entering it and of
    its branch output, against the same quantities computed from the cache of the same batch."""
    import csv
    from conftest import normlab_cli

    ck = checkpoint("--scheme", "peri", "--vocab", "17", "--width", "16", "--layers", "2",
                    "--seed", "1")
    normlab_cli("probe", "depth", "--checkpoint", ck, "--batch", "3", "--seq-len", "9",
                "--seed", "11", "--no-plot", "--out", str(tmp_path / "probe"))
    with open(tmp_path / "probe.csv") as f:
        rows = [r for r in csv.DictReader(f) if r["kind"] in ("attn", "mlp")]
    tokens, _ = normlab.tasks.random_tokens(17, 3, 9, seed=11)
    _, cache = normlab.load(ck).run_with_cache(tokens)
    rms = lambda a: float(np.sqrt((a.astype(np.float64) ** 2).mean()))
    assert len(rows) == 4
    for row in rows:
        l, kind = int(row["layer"]), row["kind"]
        stream = cache[f"blocks.{l}." + ("hook_resid_pre" if kind == "attn" else "hook_resid_mid")]
        assert rms(stream) == pytest.approx(float(row["hidden_rms"]), rel=1e-5)
        branch = cache[f"blocks.{l}.hook_{kind}_out"]
        assert rms(branch) == pytest.approx(float(row["branch_rms"]), rel=1e-5)
        normed = cache[f"blocks.{l}.hook_{kind}_out_normed"]
        assert rms(normed) == pytest.approx(float(row["branch_normed_rms"]), rel=1e-5)
