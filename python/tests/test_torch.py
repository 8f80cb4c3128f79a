"""normlab.to_torch: the twin as a torch.nn.Module, logits of normlab's within the twin's
rounding bound (docs/twin.md, "The bound") per scheme."""

import json
import math

import numpy as np
import pytest

import normlab

torch = pytest.importorskip("torch")  # Debian's python3-torch, installed by the bootstrap
from normlab import twin  # noqa: E402 (needs torch)


def assert_logits_match(model, tokens):
    """normlab's float32 logits of `tokens` (B, T) against the twin in float64: their error at
    most sqrt(K) times the float32 twin's plus eps32 of the logits' magnitude, K the roundings
    of the forward (twin.reduction_length)."""
    t = torch.from_numpy(tokens)
    with torch.no_grad():
        ref = normlab.to_torch(model, torch.float64)(t).numpy()
        twin32 = normlab.to_torch(model)(t).numpy().astype(np.float64)
    ours = model.forward(tokens).astype(np.float64)
    cfg = twin.parse_config({"normlab_config": json.dumps(model.config)}, "model")
    K = twin.reduction_length(cfg, tokens.shape[0], tokens.shape[1], ref.size, backward=False)
    bound = math.sqrt(K) * (np.abs(twin32 - ref).max() + twin.EPS32 * np.abs(ref).max())
    assert np.abs(ours - ref).max() <= bound

SCHEMES = [
    dict(scheme="pre"), dict(scheme="post"), dict(scheme="peri"), dict(scheme="peri_init"),
    dict(scheme="post_attn"), dict(scheme="mix", mix_layers=1), dict(scheme="ngpt"),
    dict(scheme="sqrt_scaling"), dict(scheme="deepnorm"), dict(scheme="attnres"),
    dict(scheme="block_attnres", block_size=2), dict(scheme="sandwich"),
    dict(scheme="pre_and_post"), dict(scheme="reordered"), dict(scheme="layernorm_scaling"),
    dict(scheme="layerscale"), dict(scheme="rezero"), dict(scheme="hybridnorm"),
    dict(scheme="resi_dual"), dict(scheme="siamesenorm"), dict(scheme="hyper_connections"),
    dict(scheme="hyper_connections", streams=3, sinkhorn=True), dict(scheme="resformer"),
    dict(scheme="custom", placement="all: in, branch=scalar(0.7); attn[1:]: out; final: on"),
]


def test_every_scheme_is_covered():
    assert sorted({s["scheme"] for s in SCHEMES}) == sorted(normlab._normlab.scheme_names())


@pytest.mark.parametrize("options", SCHEMES,
                         ids=lambda o: o["scheme"] + ("_sinkhorn" if o.get("sinkhorn") else ""))
@pytest.mark.parametrize("norm", [None, "layernorm"])
def test_logits_match_normlab(options, norm):
    if norm and options["scheme"] == "ngpt":
        norm = None  # nGPT is defined with l2
    model = normlab.init(norm=norm, vocab=13, width=16, heads=2, layers=3, pos="rope", seed=9,
                         **options)
    assert isinstance(normlab.to_torch(model), torch.nn.Module)
    assert_logits_match(model, np.random.default_rng(0).integers(0, 13, size=(2, 12)))


NORMS = ["layernorm", "rmsnorm", "standardize", "l2", "dyt", "derf", "scalenorm"]


def test_every_norm_kind_is_covered():
    assert sorted(NORMS + ["none"]) == sorted(normlab._normlab.norm_kind_names())


@pytest.mark.parametrize("norm", NORMS)
def test_every_norm_kind_matches_normlab(norm):
    """peri with an embedding norm: every slot has the kind. Gains, biases and the scalars
    (alpha, shift, scale) are moved off their inits first, through the writable views."""
    model = normlab.init(scheme="peri", norm=norm, vocab=13, width=16, heads=2, layers=2,
                         embed_norm=True, init_std=0.3, seed=4)
    rng = np.random.default_rng(1)
    for name, view in model.parameters().items():
        if ".norm" in name or name.startswith(("embed_norm.", "final_norm.")):
            view += (0.3 * rng.standard_normal(view.shape)).astype(np.float32)
    assert_logits_match(model, np.random.default_rng(0).integers(0, 13, size=(2, 12)))


@pytest.mark.parametrize("scheme", ["pre", "post", "block_attnres"])
@pytest.mark.parametrize("qk_norm", ["l2", "rmsnorm"])
def test_qk_norm_matches_normlab(scheme, qk_norm):
    """QK-norm as a model option (docs/schemes.md), with its scales and gains moved off their
    inits (s_h = 10, gains 1) through the writable views."""
    model = normlab.init(scheme=scheme, qk_norm=qk_norm, vocab=13, width=16, heads=2, layers=2,
                         pos="rope", init_std=0.3, seed=6)
    rng = np.random.default_rng(2)
    for name, view in model.parameters().items():
        if name.endswith((".qk_scale", ".q_norm.weight", ".k_norm.weight")):
            view += (0.3 * rng.standard_normal(view.shape)).astype(np.float32)
    assert model.config["qk_norm"] == qk_norm
    assert_logits_match(model, np.random.default_rng(0).integers(0, 13, size=(2, 12)))


@pytest.mark.parametrize("scheme", ["post", "ngpt"])
def test_biases_match_normlab(scheme):
    """mlp_bias and readout_bias (docs/schemes.md, "Biases"), moved off their zero init through
    the writable views: the twin adds them where normlab does (under nGPT before s_uv, s_z)."""
    model = normlab.init(scheme=scheme, vocab=13, width=16, heads=2, layers=2, pos="alibi",
                         causal=False, activation="relu", mlp_bias=True, readout_bias=True,
                         init_std=0.3, seed=5)
    rng = np.random.default_rng(3)
    biases = [name for name in model.parameters() if name.endswith((".up.bias", ".down.bias"))
              or name == "unembed.bias"]
    assert len(biases) == 5
    for name in biases:
        view = model.parameters()[name]
        view += (0.5 * rng.standard_normal(view.shape)).astype(np.float32)
    assert_logits_match(model, np.random.default_rng(0).integers(0, 13, size=(2, 12)))


def test_state_dict_names_are_the_checkpoint_names(checkpoint):
    ck = checkpoint("--scheme", "peri", "--vocab", "6", "--width", "4", "--layers", "2")
    model = normlab.load(ck)
    module = normlab.to_torch(ck)
    state = module.state_dict()
    assert set(state) == set(model.parameters())
    for name, value in model.parameters().items():
        np.testing.assert_array_equal(state[name].numpy(), value)


def test_from_torch_round_trip_is_bit_exact_and_takes_torch_training():
    model = normlab.init(scheme="peri", vocab=11, width=16, heads=2, layers=2, seed=4)
    tokens, _, _ = normlab.tasks.generate("set_complement", n=6, batch=3, seed=1, v=10)
    assert tokens.dtype == np.int32
    module = normlab.to_torch(model)
    with torch.no_grad():
        module(torch.from_numpy(tokens))  # int32, as generate returns them
        module(tokens)  # a numpy array
    back = normlab.from_torch(module)
    ours, theirs = model.parameters(), back.parameters()
    assert set(ours) == set(theirs)
    for name in ours:
        assert ours[name].tobytes() == theirs[name].tobytes(), name
    assert model.forward(tokens).tobytes() == back.forward(tokens).tobytes()
    # A PyTorch step changes the weights; from_torch carries them over exactly.
    with torch.no_grad():
        for p in module.parameters():
            p.mul_(1.5)
    moved = normlab.from_torch(module)
    for name, t in module.state_dict().items():
        assert moved.parameters()[name].tobytes() == t.numpy().tobytes(), name
    with pytest.raises(ValueError, match="to_torch"):
        normlab.from_torch(torch.nn.Linear(2, 2))


def test_double_precision_and_gradients():
    model = normlab.init(scheme="post", vocab=7, width=8, layers=1, seed=3)
    module = normlab.to_torch(model, dtype=torch.float64)
    tokens = torch.tensor([[1, 2, 3, 4]])
    logits = module(tokens)
    assert logits.dtype == torch.float64
    logits.sum().backward()
    assert module.state_dict(keep_vars=True)["embed.weight"].grad is not None


def test_twin_knows_every_config_field():
    # The C++ field list (include/normlab/model/model_fields.hpp) is the source of truth.
    from normlab import twin
    fields = normlab._normlab.model_config_fields()
    assert {name: typ for name, typ, _ in fields} == {
        name: typ.__name__ for name, typ in twin.CONFIG_FIELDS.items()}
    assert {name for name, _, optional in fields if optional} == set(twin.OPTIONAL_CONFIG_FIELDS)


@pytest.mark.parametrize("preset", ["minimal", "small", "depth"])
def test_bench_presets_train(preset, capsys):
    # `bench/twin.py --bench` (the twin's side of bench/train_bench.sh) builds every preset
    # from a config with every field and takes a training step.
    from normlab import twin
    assert set(twin.BASE_CONFIG) == set(twin.CONFIG_FIELDS)
    twin.bench(preset, steps=1, warmup=0, repeats=1, as_json=True, dtype=torch.float32, seed=0)
    result = __import__("json").loads(capsys.readouterr().out)
    assert result["preset"] == preset and result["steps"] == 1
    assert np.isfinite(result["final_loss"]) and result["final_loss"] > 0
