"""normlab.probes and normlab.particles: the program's numbers, as arrays."""

import csv
import json

import numpy as np
import pytest

import normlab
from conftest import normlab_cli


def test_depth_probe_equals_the_program(checkpoint, tmp_path):
    ck = checkpoint("--scheme", "post", "--vocab", "17", "--width", "16", "--layers", "2",
                    "--seed", "2")
    normlab_cli("probe", "depth", "--checkpoint", ck, "--batch", "2", "--seq-len", "8",
                "--no-plot", "--out", str(tmp_path / "cli"))
    expected = json.loads((tmp_path / "cli.json").read_text())["results"]
    for source in (ck, normlab.load(ck)):  # a path, and a Model saved on the fly
        r = normlab.probes.depth(source, batch=2, seq_len=8)
        assert r["loss"] == expected["loss"]
        positions = r["positions"]
        assert list(positions["kind"]) == [p["kind"] for p in expected["positions"]]
        np.testing.assert_array_equal(positions["hidden_rms"],
                                      [p["hidden_rms"] for p in expected["positions"]])


def test_variance_and_dispersion_shapes():
    model = normlab.init(scheme="pre", vocab=17, width=16, layers=1, mlp=False, seed=3)
    v = normlab.probes.variance(model, lengths=[4, 16, 64], samples=16)
    assert list(v["lengths"]["length"]) == [4, 16, 64]
    assert set(v["rows"]["length"]) == {4, 16, 64}
    std = v["rows"]["global_std"]
    assert np.all(np.isfinite(std)) and np.all(std > 0)
    d = normlab.probes.dispersion(model, lengths=[4, 16], samples=8)
    assert np.all(d["rows"]["max_weight_mean"] <= 1.0)
    assert np.all(d["rows"]["max_weight_mean"] >= d["rows"]["uniform_max_weight"] - 1e-12)


def test_particles_equal_the_program(tmp_path):
    rows = normlab.particles("post", "random", n=8, d=4, t_end=1.0, seed=3)
    normlab_cli("particles", "--scheme", "post", "--init", "random", "--n", "8", "--d", "4",
                "--t-end", "1", "--seed", "3", "--csv", str(tmp_path / "p.csv"))
    with open(tmp_path / "p.csv") as f:
        table = list(csv.DictReader(f))
    assert len(rows["t"]) == len(table) == 11
    np.testing.assert_array_equal(rows["mean_cos"], [float(r["mean_cos"]) for r in table])
    assert rows["mean_cos"][-1] > rows["mean_cos"][0]  # post-norm clusters the tokens


def test_probe_and_particle_errors_are_value_errors():
    model = normlab.init(scheme="pre", vocab=5, width=4, layers=1)
    with pytest.raises(ValueError, match="--batch"):
        normlab.probes.depth(model, batch=0)
    with pytest.raises(ValueError, match="initialization 'blah'"):
        normlab.particles("post", "blah")
