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
