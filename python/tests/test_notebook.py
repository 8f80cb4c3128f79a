"""The notebooks of examples/ run headlessly: their code cells, in order, as one script (Debian
has no nbconvert kernel in the bootstrap; the cells are plain Python)."""

import json
import math
import os

import numpy as np
import pytest

from normlab import _paths


def run_notebook(name, tmp_path, monkeypatch):
    """The namespace after running examples/NAME's code cells, with its outputs in tmp_path."""
    path = os.path.join(_paths.SOURCE_DIR, "examples", name)
    with open(path) as f:
        notebook = json.load(f)
    source = "\n".join("".join(c["source"]) for c in notebook["cells"]
                       if c["cell_type"] == "code")
    monkeypatch.setenv("NORMLAB_EXAMPLE_OUT", str(tmp_path))
    namespace = {"__name__": "__main__"}
    exec(compile(source, path, "exec"), namespace)
    return namespace


def test_length_generalization_notebook_runs(tmp_path, monkeypatch):
    pytest.importorskip("pandas")
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")  # no display
    namespace = run_notebook("length_generalization.ipynb", tmp_path, monkeypatch)
    assert (tmp_path / "tvd_against_length.png").stat().st_size > 1000
    assert (tmp_path / "attention_pattern.png").stat().st_size > 1000
    pattern = namespace["pattern"]
    assert pattern.shape == (namespace["tokens"].shape[1],) * 2
    assert set(namespace["tvd"].scheme) == {"pre", "post"}


def test_causal_dilution_notebook_runs(tmp_path, monkeypatch):
    """The patches act: rescaling to the short-length RMS with factor 1 at the short length's
    own statistics changes the long-length TVD, and the identity patch (the attention output
    divided by its RMS and multiplied back) reproduces the unpatched TVD to rounding."""
    ns = run_notebook("causal_dilution.ipynb", tmp_path, monkeypatch)
    assert [r[0] for r in ns["rows"]] == ["pre", "post"]
    for scheme, short, long, patched, returned in ns["rows"]:
        assert 0 <= short <= 1 and 0 <= long <= 1 and 0 <= patched <= 1
        assert patched != long
        model = ns["models"][scheme]

        def same_scale(x, hook):
            return x / ns["row_rms"](x) * ns["row_rms"](x)

        again = ns["tvd"](model, *ns["long"], fwd_hooks=[("blocks.0.hook_attn_out", same_scale)])
        assert again == pytest.approx(long, abs=1e-6)
    assert math.isfinite(ns["unrescaled"]) and ns["unrescaled"] != ns["stats"]["post"]["tvd_long"]
