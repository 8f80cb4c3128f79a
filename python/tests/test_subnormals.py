"""normlab's kernels flush subnormals to zero in their own tasks only: the calling thread, and
numpy on it, keeps IEEE 754's gradual underflow (docs/training.md, "Determinism")."""

import numpy as np

import normlab


def test_the_callers_numpy_keeps_gradual_underflow():
    tiny = np.float32(2.0 ** -70)  # normal; its square 2^-140 is subnormal
    # Compared as bytes: with the flush modes on, a comparison would read the subnormal as zero.
    subnormal = np.frombuffer(np.uint32(1 << 9).tobytes(), dtype=np.float32)[0]  # 2^-140
    assert (tiny * tiny).tobytes() == subnormal.tobytes()
    model = normlab.init(scheme="pre", vocab=13, width=48, layers=2, seed=2)
    tokens = np.arange(600).reshape(2, 300) % 13  # several row shards of the products
    for threads in (1, 2):
        normlab.set_threads(threads)
        model.forward(tokens)
        assert (tiny * tiny).tobytes() == subnormal.tobytes(), f"after {threads} threads"
    normlab.set_threads(1)
