"""normlab.probes: the papers' diagnostics (docs/probes.md) as arrays.

Each function runs `normlab probe KIND` on the model (saved to a temporary checkpoint when it is
a normlab.Model) with the keyword options of the command (`lengths=[16, 64]`, `samples=64`,
`input="task"`, `task="set_complement"`, `task_params={"v": 16}`, `seed=1`, ...; see `normlab
probe KIND --help`), and returns the probe's results: tables as dicts of numpy arrays (one per
column), numbers as numbers. The values are those the program writes, to the last digit.
"""

import json
import os
import tempfile
from typing import Any, Dict

import numpy as np

from ._model import Model
from ._program import call, option_args


def _columns(value: Any) -> Any:
    """A list of records becomes a dict of column arrays; dicts are converted recursively."""
    if isinstance(value, list) and value and all(isinstance(r, dict) for r in value):
        keys = list(value[0])
        columns = {}
        for k in keys:
            column = [r.get(k) for r in value]
            if all(isinstance(x, (int, float)) and not isinstance(x, bool) or x is None
                   for x in column):
                column = np.array([np.nan if x is None else x for x in column])
            elif all(isinstance(x, str) for x in column):
                column = np.array(column)
            columns[k] = column
        return columns
    if isinstance(value, dict):
        return {k: _columns(v) for k, v in value.items()}
    if isinstance(value, list) and value and all(
            isinstance(x, (int, float)) and not isinstance(x, bool) for x in value):
        return np.array(value)
    return value


def _probe(kind: str, model, options: Dict[str, Any]) -> Dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="normlab-probe-") as tmp:
        if isinstance(model, Model):
            checkpoint = os.path.join(tmp, "model")
            model.save(checkpoint)
        else:
            checkpoint = os.fspath(model)
        prefix = os.path.join(tmp, "probe")
        call(["probe", kind, "--checkpoint", checkpoint, "--out", prefix, "--no-plot"] +
             option_args(options), quiet=True)
        with open(prefix + ".json") as f:
            report = json.load(f)
    return _columns(report.get("results", report))


def variance(model, **options) -> Dict[str, Any]:
    """Attention-output std against length and its log-log slope (On Vanishing Variance):
    `normlab probe variance`."""
    return _probe("variance", model, options)


def dispersion(model, **options) -> Dict[str, Any]:
    """Largest attention weight and attention entropy against length: `normlab probe
    dispersion`."""
    return _probe("dispersion", model, options)


def depth(model, **options) -> Dict[str, Any]:
    """Per-layer hidden-state norms, gradient norms and token collapse on one batch:
    `normlab probe depth`."""
    return _probe("depth", model, options)


def dilution(model, **options) -> Dict[str, Any]:
    """Set Complement: logit gap of absent against present tokens against the set size:
    `normlab probe dilution`."""
    return _probe("dilution", model, options)
