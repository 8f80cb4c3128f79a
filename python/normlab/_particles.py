"""normlab.particles: tokens as particles on the sphere (docs/particles.md) as arrays."""

import csv
import os
import tempfile
from typing import Dict

import numpy as np

from ._program import call, option_args


def particles(scheme: str, init: str, **options) -> Dict[str, np.ndarray]:
    """Integrates the normalized-attention dynamics like `normlab particles --scheme S --init I`
    with the command's other options as keywords (n=32, d=32, beta=1.0, t_end=10.0, seed=0,
    qkv="identity", integrator="rk4", record_every=0.1, causal=True, ...; `normlab particles
    --help`). Returns the recorded rows, one array per column (t, the mean and minimum cosine,
    radii, ...: docs/particles.md)."""
    with tempfile.TemporaryDirectory(prefix="normlab-particles-") as tmp:
        path = os.path.join(tmp, "rows.csv")
        call(["particles", "--scheme", scheme, "--init", init, "--csv", path] +
             option_args(options), quiet=True)
        with open(path) as f:
            rows = list(csv.reader(f))
    header, values = rows[0], np.array(rows[1:], dtype=np.float64)
    return {name: values[:, i] for i, name in enumerate(header)}
