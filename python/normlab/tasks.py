"""normlab.tasks: the synthetic tasks of the studies, as numpy batches (docs/tasks.md)."""

import json
from typing import List, Mapping, Optional, Tuple

import numpy as np

from . import _normlab


def names() -> List[str]:
    """Every task's name."""
    return [t["name"] for t in _normlab.task_list()]


def info(name: str, **params) -> dict:
    """The task's label, vocab V, fields F, allowed lengths and metric names."""
    return _normlab.task_describe(name, json.dumps(params))


def defaults(name: str) -> dict:
    """The task's parameters and their defaults."""
    for t in _normlab.task_list():
        if t["name"] == name:
            return dict(t["params"])
    raise ValueError(f"unknown task '{name}'; allowed: {', '.join(names())}")


def generate(name: str, n: int, batch: int = 1, seed: int = 0, validation: bool = False,
             task_params: Optional[Mapping] = None,
             **params) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """B sequences of task length n: tokens (B, T) int32 ((B, T, F) for multi-field tasks),
    targets (B, T, V) float32 (zero rows where unscored) and weight (B, T) float32 (0 =
    unscored). The same seed gives the same sequences as the C++ task. The task's parameters
    are keywords (v=16), or `task_params` for one whose name is taken by this function's own
    (tomita's language n: task_params={"n": 3})."""
    merged = dict(task_params or {})
    merged.update(params)
    return _normlab.task_generate(name, json.dumps(merged), n, batch, seed, validation)


def random_tokens(vocab: int, batch: int, length: int, seed: int = 0) -> Tuple[np.ndarray, np.ndarray]:
    """I.i.d. uniform tokens (B, T) and next-token targets (B, T) (-1 at the last position):
    the random batches of `normlab grads`, `train-steps` and the probes' random input for the
    same seed."""
    return _normlab.random_tokens(vocab, batch, length, seed)
