"""normlab.Trainer: the C++ trainer of `normlab train`, in this process, with a callback."""

import json
import os
from typing import Callable, Optional

import numpy as np

from . import _normlab
from ._model import Model


class StepInfo(dict):
    """What the callback receives every N steps: step, steps, loss, lr, grad_norm, length,
    val_loss (NaN without eval_every) as keys, and `model`, the model at that step (a copy:
    probing it, or saving it, changes nothing of the run)."""

    def __init__(self, info: dict, params: np.ndarray, config: dict):
        super().__init__(info)
        self._params, self._config = params, config
        self._model: Optional[Model] = None

    def __missing__(self, key):
        if key == "model":
            return self.model
        raise KeyError(key)

    @property
    def model(self) -> Model:
        if self._model is None:
            core = _normlab.Model.from_config(json.dumps(self._config), 0)
            model = Model(core)
            views = model.parameters()
            offset = 0
            for view in views.values():  # the layout's order, as the flat vector holds them
                view.reshape(-1)[...] = self._params[offset:offset + view.size]
                offset += view.size
            if offset != self._params.size:
                raise RuntimeError(f"the trainer's {self._params.size} parameters do not fill "
                                   f"the model's {offset}")
            self._model = model
        return self._model


class Trainer:
    """Trains one run folder in this process with the trainer of `normlab train`: the same bits
    for the same run.json (docs/training.md), the same checkpoints, resume and status.

        trainer = normlab.Trainer("runs/mine", model=normlab.init("post", vocab=17, width=16),
                                  task={"name": "set_complement", "v": 16},
                                  train={"steps": 2000, "lr": 0.01, "max_len": 8})
        trainer.run(callback=lambda info: print(info["step"], info["loss"]), every=100)

    `model` gives the architecture (its config); the weights start from the run's seed
    (train["seed"], default 0) as `normlab train` starts them. `train` holds the training
    settings that differ from the defaults, by their names in run.json (docs/training.md):
    steps, batch, lr, min_len, max_len, warmup, schedule, seed, averaging={"every": ...}, ...
    Without model, task and train the folder must hold a run.json already (one that `normlab
    run` prepared, say); with them, a run.json there must describe the same run."""

    def __init__(self, run_dir, model: Optional[Model] = None, task: Optional[dict] = None,
                 train: Optional[dict] = None, eval: Optional[dict] = None, label: str = ""):
        self.run_dir = os.fspath(run_dir)
        given = [x is not None for x in (model, task, train)]
        if any(given) and not all(given):
            raise ValueError("model, task and train: give all three (a new run) or none (a "
                             "prepared run folder)")
        if all(given):
            if not isinstance(model, Model):
                raise ValueError(f"model: a {type(model).__name__}; allowed: a normlab.Model")
            _normlab.prepare_run(self.run_dir, label or model.label, json.dumps(model.config),
                                 json.dumps(task), json.dumps(train),
                                 "" if eval is None else json.dumps(eval))
        elif not os.path.isfile(os.path.join(self.run_dir, "run.json")):
            raise ValueError(f"{self.run_dir}: no run.json; give model, task and train to "
                             "prepare a run there")
        with open(os.path.join(self.run_dir, "run.json")) as f:
            self._config = json.load(f)["model"]

    @property
    def status(self) -> str:
        """pending, running, interrupted, finished or diverged (run.json's status)."""
        return _normlab.run_status(self.run_dir)

    def run(self, callback: Optional[Callable[[StepInfo], Optional[bool]]] = None,
            every: int = 100, resume: bool = True, data=None, loss=None) -> dict:
        """Trains to the run's last step, resuming from its checkpoint (resume=False starts
        over). callback(info) is called after every `every`-th step and the last; returning
        False stops the run there, saved and marked interrupted, so that run() again continues
        with the same bits. An exception in the callback stops the run the same way and is
        raised. Returns the outcome: status, steps, last_loss, seconds, message.

        data: the batches instead of the run's task, a function of the step (from 1) or an
        iterable, giving (tokens, targets) or (tokens, targets, weight) in the arrays of
        Model.grads; None (or the iterable's end) stops the run, resumable. A function of
        the step resumes with the same data; an iterable continues where it is. The task
        still sets the vocabulary, validates and evaluates.
        loss: loss(logits, batch) -> (loss, dL/dlogits) in numpy in place of the
        cross-entropy, with logits (B, T, V) float32 and batch a dict of tokens, targets
        (B, T, V) and weight (B, T)."""
        if not isinstance(every, int) or every < 1:
            raise ValueError(f"every: {every!r}; allowed: a whole number of steps >= 1")
        wrapped = None
        if callback is not None:
            def wrapped(info, params):
                return callback(StepInfo(info, params, self._config))
        if data is not None and not callable(data):
            batches = iter(data)
            data = lambda step: next(batches, None)  # noqa: E731
        if loss is not None and not callable(loss):
            raise ValueError(f"loss: a {type(loss).__name__}; allowed: loss(logits, batch) -> "
                             "(loss, dL/dlogits)")
        return _normlab.train_run(self.run_dir, resume, every, wrapped, data, loss)

    def model(self, weights: str = "raw") -> Model:
        """The final weights of a finished run: raw, ema or bema."""
        from ._model import load
        files = {"raw": "model.safetensors", "ema": "ema.safetensors", "bema": "bema.safetensors"}
        if weights not in files:
            raise ValueError(f"weights: '{weights}'; allowed: raw, ema, bema")
        return load(os.path.join(self.run_dir, "final", files[weights]))
