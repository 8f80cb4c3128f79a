"""normlab.tasks: batches as numpy arrays, the same for the same seed."""

import numpy as np
import pytest

import normlab


def test_every_task_is_listed_with_its_defaults():
    names = normlab.tasks.names()
    for name in ["set_complement", "max_retrieval", "dyck", "tomita", "argmax_retrieval",
                 "dict_lookup", "char_lm"]:
        assert name in names
    assert "v" in normlab.tasks.defaults("set_complement")


def test_generate_shapes_and_determinism():
    info = normlab.tasks.info("set_complement", v=10)
    tokens, targets, weight = normlab.tasks.generate("set_complement", n=5, batch=3, seed=4, v=10)
    assert tokens.dtype == np.int32 and tokens.shape[0] == 3
    assert targets.shape == tokens.shape + (info["vocab"],)
    assert weight.shape == tokens.shape
    assert tokens.min() >= 0 and tokens.max() < info["vocab"]
    scored = weight > 0
    assert scored.any()
    np.testing.assert_allclose(targets[scored].sum(-1), 1.0, rtol=1e-6)
    assert np.all(targets[~scored] == 0.0)
    again = normlab.tasks.generate("set_complement", n=5, batch=3, seed=4, v=10)
    np.testing.assert_array_equal(again[0], tokens)
    other = normlab.tasks.generate("set_complement", n=5, batch=3, seed=5, v=10)
    assert not np.array_equal(other[0], tokens)


def test_a_parameter_named_like_the_length_goes_through_task_params():
    # tomita's language is its parameter n, which the length n would shadow as a keyword.
    assert normlab.tasks.info("tomita", n=2)["length_step"] == 2  # T2: even lengths only
    assert normlab.tasks.info("tomita", n=3)["length_step"] == 1
    tokens2, _, _ = normlab.tasks.generate("tomita", n=6, batch=64, seed=1, task_params={"n": 2})
    tokens3, _, _ = normlab.tasks.generate("tomita", n=6, batch=64, seed=1, task_params={"n": 3})
    assert tokens2.shape == tokens3.shape
    assert not np.array_equal(tokens2, tokens3)  # another language, other strings
    with pytest.raises(Exception, match="odd|even|length"):
        normlab.tasks.generate("tomita", n=7, task_params={"n": 2})  # T2 has even lengths only


def test_a_task_batch_trains_a_model():
    tokens, targets, weight = normlab.tasks.generate("set_complement", n=4, batch=2, seed=1, v=6)
    vocab = normlab.tasks.info("set_complement", v=6)["vocab"]
    model = normlab.init(scheme="post", vocab=vocab, width=8, layers=1, seed=1)
    loss, grads = model.grads(tokens, targets, weight)
    assert np.isfinite(loss) and loss > 0
    assert any(np.abs(g).max() > 0 for g in grads.values())
