"""normlab.Model against the program: the same logits, loss and gradients, bit for bit."""

import json

import numpy as np
import pytest

import normlab
from conftest import normlab_cli, read_safetensors

SCHEME_ARGS = [
    ["--scheme", "pre"],
    ["--scheme", "post", "--norm", "layernorm", "--pos", "rope", "--heads", "2"],
    ["--scheme", "peri", "--tied"],
    ["--scheme", "ngpt"],
    ["--scheme", "block_attnres", "--block-size", "2", "--layers", "3"],
    ["--scheme", "post_attn", "--no-mlp"],
]


@pytest.mark.parametrize("args", SCHEME_ARGS, ids=lambda a: "_".join(a[1:]))
def test_forward_equals_the_program(checkpoint, args):
    ck = checkpoint(*args, "--vocab", "11", "--width", "8", "--seed", "3")
    tokens = [3, 1, 4, 1, 5, 9, 2, 6]
    expected = np.array(json.loads(normlab_cli("forward", "--checkpoint", ck, "--tokens",
                                                " ".join(map(str, tokens))))["logits"],
                        dtype=np.float32)
    logits = normlab.load(ck).forward(tokens)
    assert logits.shape == (8, 11)
    np.testing.assert_array_equal(logits, expected)
    batched = normlab.load(ck).forward(np.array([tokens, tokens[::-1]], dtype=np.int64))
    assert batched.shape == (2, 8, 11)
    np.testing.assert_array_equal(batched[0], expected)


@pytest.mark.parametrize("args", SCHEME_ARGS, ids=lambda a: "_".join(a[1:]))
def test_grads_equal_the_program(checkpoint, tmp_path, args):
    ck = checkpoint(*args, "--vocab", "11", "--width", "8", "--seed", "4")
    grads_file = str(tmp_path / "g.safetensors")
    normlab_cli("grads", "--checkpoint", ck, "--out", grads_file, "--batch", "2", "--seq-len", "6")
    ref = read_safetensors(grads_file)
    model = normlab.load(ck)
    tokens = ref["tokens"].astype(np.int32)
    loss, grads = model.grads(tokens, ref["target"], ref["weight"])
    assert np.float32(loss) == ref["loss"][0]
    names = {n[len("grad."):] for n in ref if n.startswith("grad.")}
    assert set(grads) == names == set(model.parameters())
    for name in names:
        np.testing.assert_array_equal(grads[name], ref["grad." + name], err_msg=name)
    # Token-id targets give the same loss as their one-hot distributions.
    ids = np.where(ref["weight"] > 0, ref["target"].argmax(-1), -1)
    loss_ids, _ = model.grads(tokens, ids)
    assert loss_ids == pytest.approx(loss, rel=1e-6)


def test_init_matches_the_program_and_saves(checkpoint, tmp_path):
    ck = checkpoint("--scheme", "peri", "--vocab", "9", "--width", "12", "--heads", "3",
                    "--seed", "7")
    model = normlab.init(scheme="peri", vocab=9, width=12, heads=3, seed=7)
    program = normlab.load(ck)
    assert model.config == program.config
    for name, value in program.parameters().items():
        np.testing.assert_array_equal(model.parameters()[name], value, err_msg=name)
    model.save(tmp_path / "saved")
    again = normlab.load(tmp_path / "saved" / "model.safetensors")
    np.testing.assert_array_equal(again.forward([1, 2, 3]), model.forward([1, 2, 3]))


def test_ngpt_defaults_to_l2_and_options_take_booleans():
    assert normlab.init(scheme="ngpt").config["norm"] == "l2"
    assert normlab.init(scheme="pre").config["norm"] == "rmsnorm"
    assert normlab.init(scheme="pre", final_norm=False).config["final_norm"] == "off"


def test_parameter_views_write_through():
    model = normlab.init(scheme="pre", vocab=5, width=4, layers=1, seed=1)
    before = model.forward([0, 1, 2]).copy()
    model.parameters()["unembed.weight"][:] = 0.0
    assert np.all(model.forward([0, 1, 2]) == 0.0)
    assert not np.all(before == 0.0)


def test_threads_do_not_change_results():
    model = normlab.init(scheme="pre", vocab=13, width=16, layers=2, seed=2)
    tokens = np.arange(40).reshape(2, 20) % 13
    normlab.set_threads(1)
    one = model.forward(tokens)
    normlab.set_threads(2)
    two = model.forward(tokens)
    normlab.set_threads(1)
    np.testing.assert_array_equal(one, two)
