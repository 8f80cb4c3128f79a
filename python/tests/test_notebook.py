"""examples/length_generalization.ipynb runs headlessly: its code cells, in order, as one script
(Debian has no nbconvert kernel in the bootstrap; the cells are plain Python)."""

import json
import os

import pytest

from normlab import _paths


def test_example_notebook_runs(tmp_path, monkeypatch):
    pytest.importorskip("pandas")
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")  # no display
    path = os.path.join(_paths.SOURCE_DIR, "examples", "length_generalization.ipynb")
    with open(path) as f:
        notebook = json.load(f)
    source = "\n".join("".join(c["source"]) for c in notebook["cells"]
                       if c["cell_type"] == "code")
    monkeypatch.setenv("NORMLAB_EXAMPLE_OUT", str(tmp_path))
    namespace = {"__name__": "__main__"}
    exec(compile(source, path, "exec"), namespace)
    assert (tmp_path / "tvd_against_length.png").stat().st_size > 1000
    assert (tmp_path / "attention_pattern.png").stat().st_size > 1000
    pattern = namespace["pattern"]
    assert pattern.shape == (namespace["tokens"].shape[1],) * 2
    assert set(namespace["tvd"].scheme) == {"pre", "post"}
