"""normlab from Python: the same engine as the `normlab` program (docs/python.md).

    import normlab
    model = normlab.init(scheme="peri", vocab=16, width=32, layers=2, seed=1)
    logits, cache = model.run_with_cache([[3, 1, 4, 1, 5]])
    tokens, targets, weight = normlab.tasks.generate("set_complement", n=8, batch=4, seed=0)

Errors carry the program's one-line messages: a bad input raises ValueError.
"""

from ._model import Model, init, load
from ._runs import run, train
from ._results import claims, results
from ._torch import from_torch, to_torch
from ._trainer import StepInfo, Trainer
from . import probes, tasks
from ._particles import particles
from ._normlab import set_threads as _set_threads
from ._normlab import machine


def set_threads(n: int) -> None:
    """Threads every kernel uses (default 1); results are bit-identical at any count."""
    if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= 256:
        raise ValueError(f"threads: {n!r}; allowed: an integer from 1 to 256")
    _set_threads(n)


__all__ = ["Model", "init", "load", "run", "train", "results", "claims", "to_torch", "from_torch",
           "Trainer", "StepInfo", "tasks", "probes", "particles", "set_threads", "machine"]
