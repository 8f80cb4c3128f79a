"""normlab.Trainer (docs/python.md, "Training from Python"): the trainer of `normlab train` in
this process, bit for bit; a callback every N steps that sees the model and can stop the run,
which then resumes to the same bits; clean refusals."""

import json
import math
import shutil
import subprocess

import numpy as np
import pytest

import normlab
from normlab import _paths

TASK = {"name": "set_complement", "v": 6}
TRAIN = {"steps": 200, "batch": 8, "lr": 0.01, "min_len": 1, "max_len": 3,
         "checkpoint_every": 50, "log_every": 10, "seed": 3}


def model():
    return normlab.init(scheme="post", vocab=7, width=8, layers=1, mlp=False, seed=0)


def final_bytes(run_dir):
    return {w: (run_dir / "final" / w).read_bytes()
            for w in ("model.safetensors", "ema.safetensors", "bema.safetensors")}


def test_same_bits_as_the_program_over_200_steps(tmp_path):
    mine = tmp_path / "mine"
    trainer = normlab.Trainer(mine, model=model(), task=TASK, train=TRAIN)
    program = tmp_path / "program"
    shutil.copytree(mine, program)  # the same run.json, not yet trained
    seen = []

    def callback(info):
        seen.append((info["step"], info["loss"]))
        assert info["model"].forward([1, 2, 3]).shape == (3, 7)  # the model at that step

    outcome = trainer.run(callback=callback, every=50)
    assert outcome["status"] == "finished" and outcome["steps"] == 200
    assert [s for s, _ in seen] == [50, 100, 150, 200]
    assert all(math.isfinite(loss) for _, loss in seen)
    r = subprocess.run([_paths.NORMLAB_BINARY, "train", str(program)], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    assert final_bytes(mine) == final_bytes(program)
    assert trainer.status == "finished"
    assert trainer.model("bema").forward([1, 2]).shape == (2, 7)


def test_stopping_in_the_callback_resumes_to_the_same_bits(tmp_path):
    whole = tmp_path / "whole"
    normlab.Trainer(whole, model=model(), task=TASK, train=TRAIN).run()
    stopped = tmp_path / "stopped"
    trainer = normlab.Trainer(stopped, model=model(), task=TASK, train=TRAIN)
    outcome = trainer.run(callback=lambda info: info["step"] < 70, every=10)
    assert outcome["status"] == "interrupted" and outcome["steps"] == 70
    assert trainer.status == "interrupted"
    steps = [json.loads(line)["step"] for line in open(stopped / "metrics.jsonl")]
    assert steps[-1] == 70
    assert trainer.run()["status"] == "finished"  # again in the same process: resumed
    assert final_bytes(whole) == final_bytes(stopped)


def test_an_exception_in_the_callback_is_raised_after_saving(tmp_path):
    trainer = normlab.Trainer(tmp_path / "run", model=model(), task=TASK, train=TRAIN)

    def fails(info):
        raise KeyError("boom")

    with pytest.raises(KeyError, match="boom"):
        trainer.run(callback=fails, every=20)
    assert trainer.status == "interrupted"
    assert trainer.run()["steps"] == 200


def test_refusals(tmp_path):
    with pytest.raises(ValueError, match="all three"):
        normlab.Trainer(tmp_path / "a", model=model())
    with pytest.raises(ValueError, match="no run.json"):
        normlab.Trainer(tmp_path / "b")
    with pytest.raises(ValueError, match="vocab"):
        normlab.Trainer(tmp_path / "c", model=normlab.init("post", vocab=9, width=8), task=TASK,
                        train=TRAIN)
    with pytest.raises(ValueError, match="unknown key"):
        normlab.Trainer(tmp_path / "d", model=model(), task=TASK, train={"stepz": 3})
    trainer = normlab.Trainer(tmp_path / "e", model=model(), task=TASK, train=TRAIN)
    with pytest.raises(ValueError, match="every"):
        trainer.run(every=0)
    with pytest.raises(ValueError, match="different run"):
        normlab.Trainer(tmp_path / "e", model=model(), task=TASK, train=dict(TRAIN, lr=0.02))


# Data and loss from Python.

def task_batches(step):
    """Step `step`'s batch of the run's task, drawn from its own seed: a function of the step,
    so a resumed run sees the same data."""
    tokens, targets, weight = normlab.tasks.generate("set_complement", n=3, batch=8, seed=step,
                                                     v=6)
    return tokens, targets, weight


def numpy_cross_entropy(logits, batch):
    """training's loss (src/core/kernels/cross_entropy.hpp) in float64: the weighted mean over
    positions of -sum_v p_v log softmax(z)_v, and its gradient (softmax - p) w / sum(w)."""
    z = logits.astype(np.float64)
    p, w = batch["targets"].astype(np.float64), batch["weight"].astype(np.float64)
    z = z - z.max(-1, keepdims=True)
    log_softmax = z - np.log(np.exp(z).sum(-1, keepdims=True))
    total = w.sum()
    loss = float((w * -(p * log_softmax).sum(-1)).sum() / total)
    grad = (np.exp(log_softmax) * p.sum(-1, keepdims=True) - p) * (w / total)[..., None]
    return loss, grad.astype(np.float32)


def test_a_numpy_cross_entropy_trains_as_the_built_in_one(tmp_path):
    """The same loss written in numpy: the same losses step by step and the same weights, to
    float32 rounding of the gradient (AdamW's step divides by sqrt(v), so an update differs by
    about the gradient's relative error, ~1e-7 here, times lr per step)."""
    train = dict(TRAIN, steps=20)
    built_in, custom = tmp_path / "built_in", tmp_path / "custom"
    losses = {"built_in": [], "custom": []}
    for name, run_dir, loss in (("built_in", built_in, None),
                                ("custom", custom, numpy_cross_entropy)):
        trainer = normlab.Trainer(run_dir, model=model(), task=TASK, train=train)
        outcome = trainer.run(callback=lambda info, n=name: losses[n].append(info["loss"]),
                              every=1, loss=loss)
        assert outcome["status"] == "finished"
    np.testing.assert_allclose(losses["custom"], losses["built_in"], rtol=1e-5)
    a = normlab.load(built_in / "final" / "model.safetensors").parameters()
    b = normlab.load(custom / "final" / "model.safetensors").parameters()
    for name in a:
        np.testing.assert_allclose(b[name], a[name], atol=20 * 0.01 * 1e-4, err_msg=name)


def test_data_from_python_resumes_to_the_same_bits(tmp_path):
    whole = normlab.Trainer(tmp_path / "whole", model=model(), task=TASK, train=TRAIN)
    assert whole.run(data=task_batches)["status"] == "finished"
    stopped = normlab.Trainer(tmp_path / "stopped", model=model(), task=TASK, train=TRAIN)

    def until_70(step):
        return task_batches(step) if step <= 70 else None

    outcome = stopped.run(data=until_70)
    assert outcome["status"] == "interrupted" and outcome["steps"] == 70
    assert stopped.run(data=task_batches)["status"] == "finished"
    assert final_bytes(tmp_path / "whole") == final_bytes(tmp_path / "stopped")
    # Python's data is not the task's own stream: the weights differ from a task run's.
    normlab.Trainer(tmp_path / "task", model=model(), task=TASK, train=TRAIN).run()
    assert final_bytes(tmp_path / "task") != final_bytes(tmp_path / "whole")


def test_an_iterable_ends_the_run_where_it_ends(tmp_path):
    trainer = normlab.Trainer(tmp_path / "run", model=model(), task=TASK, train=TRAIN)
    outcome = trainer.run(data=[task_batches(s) for s in range(1, 31)])
    assert outcome["status"] == "interrupted" and outcome["steps"] == 30


def test_errors_in_data_and_loss_stop_the_run_resumably(tmp_path):
    trainer = normlab.Trainer(tmp_path / "run", model=model(), task=TASK, train=TRAIN)

    def late_failure(logits, batch):
        if not hasattr(late_failure, "calls"):
            late_failure.calls = 0
        late_failure.calls += 1
        if late_failure.calls > 12:
            raise RuntimeError("loss failed")
        return numpy_cross_entropy(logits, batch)

    with pytest.raises(RuntimeError, match="loss failed"):
        trainer.run(loss=late_failure)
    assert trainer.status == "interrupted"
    with pytest.raises(ValueError, match="dL/dlogits has 3 values"):
        trainer.run(loss=lambda logits, batch: (0.0, np.zeros(3)))
    with pytest.raises(ValueError, match="gave 1 values"):
        trainer.run(data=lambda step: (np.zeros((2, 3), np.int32),))
    with pytest.raises(ValueError, match="loss: a int"):
        trainer.run(loss=3)
    assert trainer.run()["steps"] == 200
