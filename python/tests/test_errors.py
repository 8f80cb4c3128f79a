"""Bad inputs raise Python exceptions with the program's one-line messages, never a crash."""

import os

import numpy as np
import pytest

import normlab


def test_damaged_checkpoint_is_a_value_error_naming_the_file(checkpoint):
    ck = checkpoint("--scheme", "pre", "--vocab", "6", "--width", "4")
    path = os.path.join(ck, "model.safetensors")
    with open(path, "r+b") as f:
        f.seek(os.path.getsize(path) - 3)
        f.write(b"\xff\xff\xff")  # a flipped data byte: the CRC-32 catches it
    with pytest.raises(ValueError, match="model.safetensors") as e:
        normlab.load(ck)
    assert "\n" not in str(e.value)


def test_missing_and_non_regular_paths(tmp_path):
    with pytest.raises(ValueError):
        normlab.load(tmp_path / "nothing")
    with pytest.raises(ValueError):
        normlab.load("/dev/urandom")


@pytest.mark.parametrize("options, words", [
    (dict(width=0), "width"),
    (dict(width=2**40), "width"),
    (dict(heads=True), "heads"),
    (dict(block_size=2.5), "block_size"),
    (dict(norm_eps=float("nan")), "norm_eps"),
    (dict(widht=8), "unknown model option 'widht'"),
    (dict(scheme_typo=1), "allowed"),
])
def test_invalid_model_options(options, words):
    with pytest.raises(ValueError, match=words):
        normlab.init(scheme="pre", **options)


def test_invalid_scheme_and_norm():
    with pytest.raises(ValueError, match="allowed"):
        normlab.init(scheme="prenorm")
    with pytest.raises(ValueError, match="norm"):
        normlab.init(scheme="pre", norm="batchnorm")


def test_invalid_tokens_and_targets():
    model = normlab.init(scheme="pre", vocab=5, width=4, layers=1)
    with pytest.raises(ValueError, match="token"):
        model.forward([0, 1, 5])  # outside [0, V)
    for call in (model.forward, model.run_with_cache):
        with pytest.raises(ValueError, match="empty field"):
            call([0, -1, 2])  # -1 marks an empty field; a position's field 0 is its token
    with pytest.raises(ValueError, match="empty field"):
        model.grads([[0, -1, 2]], [[1, 2, 3]])
    with pytest.raises(ValueError, match="integer"):
        model.forward(np.array([0.5, 1.0]))
    with pytest.raises(ValueError, match="dimensions"):
        model.forward(np.zeros((1, 1, 1, 1), dtype=np.int32))
    with pytest.raises(ValueError, match="empty"):
        model.forward(np.zeros((0,), dtype=np.int32))
    with pytest.raises(ValueError, match="targets"):
        model.grads([[0, 1, 2]], [[1, 2]])
    with pytest.raises(ValueError, match="outside"):
        model.grads([[0, 1, 2]], [[1, 2, 7]])


def test_unsigned_tokens_beyond_int32_are_refused_not_wrapped():
    # Through int64, 2^64 - 1 would become -1, the empty field (kNoToken), and be accepted.
    model = normlab.init(scheme="pre", vocab=5, width=4, layers=1)
    top = np.array([2**64 - 1, 3], dtype=np.uint64)
    with pytest.raises(ValueError, match="18446744073709551615"):
        model.forward(top)
    with pytest.raises(ValueError, match="out of range"):
        model.grads([[1, 2]], top.reshape(1, 2))
    assert model.forward(np.array([1, 3], dtype=np.uint64)).shape == (2, 5)


def test_unaligned_arrays_read_as_aligned_ones():
    model = normlab.init(scheme="pre", vocab=5, width=4, layers=1)
    tokens = np.array([[1, 2, 3, 4]], dtype=np.int64)
    unaligned = np.frombuffer(b"\0" + tokens.tobytes(), dtype=np.int64, offset=1).reshape(1, 4)
    assert unaligned.ctypes.data % 8 != 0
    np.testing.assert_array_equal(model.forward(unaligned), model.forward(tokens))
    weight = np.array([[1.0, 0.5, 0.25, 2.0]], dtype=np.float32)
    odd_weight = np.frombuffer(b"\0" + weight.tobytes(), dtype=np.float32, offset=1).reshape(1, 4)
    loss, _ = model.grads(tokens, [[2, 3, 4, -1]], weight)
    odd_loss, _ = model.grads(unaligned, [[2, 3, 4, -1]], odd_weight)
    assert odd_loss == loss


def test_invalid_task_requests():
    with pytest.raises(ValueError, match="set_complement"):
        normlab.tasks.generate("set_complemnt", n=3)
    with pytest.raises(ValueError, match="length"):
        normlab.tasks.generate("set_complement", n=99, v=6)
    with pytest.raises(ValueError, match="no parameter 'q'"):
        normlab.tasks.generate("set_complement", n=3, q=1)
    with pytest.raises(ValueError):
        normlab.set_threads(0)
