"""normlab.run, normlab.results, normlab.claims: a tiny study from a dict, resumed, as DataFrames."""

import json

import pytest

import normlab

TINY = {
    "name": "tiny",
    "schemes": ["pre", "post"],
    "seeds": [1, 2],
    "task": {"name": "set_complement", "v": 6},
    "model": {"width": 5, "layers": 1, "mlp": False},
    "train": {"steps": 20, "batch": 8, "lengths": [1, 3], "lr": 0.01},
    "eval": {"lengths": [2, 5], "samples": 16},
}


def test_run_from_a_dict_then_results_and_resume(tmp_path, capfd):
    pytest.importorskip("pandas")
    out = tmp_path / "tiny"
    assert normlab.run(TINY, out=out, quiet=True) == str(out)
    frames = normlab.results(out)
    assert {"experiments", "runs", "results", "curves", "probes"} <= set(frames)
    runs = frames["runs"]
    assert len(runs) == 4 and set(runs["status"]) == {"finished"}
    results = frames["results"]
    assert set(results["scheme"]) == {"pre", "post"} and set(results["seed"]) == {1, 2}
    rows = len(results)
    assert rows > 0
    normlab.run(TINY, out=out)  # everything finished: reused, nothing duplicated
    assert "0 to do, 4 already done" in capfd.readouterr().out  # the progress is passed through
    assert len(normlab.results(out)["results"]) == rows


def test_run_errors_carry_the_program_message(tmp_path):
    bad = dict(TINY, seeds=[1, 1])
    with pytest.raises(ValueError, match="seed 1 is listed twice"):
        normlab.run(bad, out=tmp_path / "bad", quiet=True)
    with pytest.raises(ValueError, match="finite"):
        normlab.run(dict(TINY, train=dict(TINY["train"], lr=float("inf"))), out=tmp_path / "x")


def test_dict_errors_name_the_key_once(tmp_path, capfd):
    bad = dict(TINY, train=dict(TINY["train"], schedule="linear", decay_fraction=0.2))
    with pytest.raises(ValueError) as e:
        normlab.run(bad, out=tmp_path / "bad")
    assert str(e.value).startswith("experiment['train']['decay_fraction']: "), str(e.value)
    assert "wsd" in str(e.value) and "normlab-" not in str(e.value)
    assert "decay_fraction" not in capfd.readouterr().out  # raised, not also printed
    with pytest.raises(ValueError) as e:
        normlab.run(dict(TINY, seeds=[1, 1]), out=tmp_path / "bad", quiet=True)
    assert str(e.value).startswith("experiment['seeds']: "), str(e.value)


def test_results_and_claims_refuse_other_folders(tmp_path):
    with pytest.raises(ValueError, match="results.sqlite"):
        normlab.results(tmp_path)
    with pytest.raises(ValueError, match="claims.json"):
        normlab.claims(tmp_path)


def test_claims_reads_a_ledger(tmp_path):
    pd = pytest.importorskip("pandas")
    ledger = {"tier": "quick", "studies": [], "claims": [
        {"id": "a.b", "paper": "2504.02827", "verdict": "reproduced", "effect": 0.2, "low": 0.1,
         "high": 0.3, "n": 3, "sentence": "A beats B.", "study": "experiments/x.toml"}]}
    (tmp_path / "claims.json").write_text(json.dumps(ledger))
    frame = normlab.claims(tmp_path)
    assert list(frame["verdict"]) == ["reproduced"] and frame["low"][0] == 0.1
    # Design rule D1's fourth verdict and its check per length come through as written.
    lengths = [{"length": 16, "baseline_mean": 0.995, "floor": 0.5, "ceiling": 1.0,
                "margin": 0.01, "place": "ceiling"}]
    ledger["claims"].append(dict(ledger["claims"][0], id="a.c", verdict="untestable (ceiling)",
                                 informativeness={"metric": "roc_auc", "informative": 0,
                                                  "lengths": lengths}))
    ledger["claims"][0]["informativeness"] = None
    (tmp_path / "claims.json").write_text(json.dumps(ledger))
    frame = normlab.claims(tmp_path)
    assert list(frame["verdict"]) == ["reproduced", "untestable (ceiling)"]
    assert pd.isna(frame["informative"][0]) and frame["informative"][1] == 0
    assert frame["informativeness"][1]["lengths"][0]["place"] == "ceiling"
    # Findings (expect "measure") have their kind; a ledger before `kind` gets it derived.
    assert list(frame["kind"]) == ["claim", "claim"]
    ledger["claims"].append(dict(ledger["claims"][0], id="a.d", verdict="measured",
                                 expect="measure"))
    ledger["claims"].append(dict(ledger["claims"][0], id="a.e", negative_control=True))
    (tmp_path / "claims.json").write_text(json.dumps(ledger))
    assert list(normlab.claims(tmp_path)["kind"]) == ["claim", "claim", "finding",
                                                       "negative control"]
    for c, kind in zip(ledger["claims"], ["claim", "claim", "finding", "negative control"]):
        c["kind"] = kind
    ledger["claims"][0]["kind"] = "finding"  # as written wins
    (tmp_path / "claims.json").write_text(json.dumps(ledger))
    assert normlab.claims(tmp_path)["kind"][0] == "finding"
    (tmp_path / "claims.json").write_text("[]")
    with pytest.raises(ValueError, match="not a claims ledger"):
        normlab.claims(tmp_path)


def test_sweep_values_are_typed_columns(tmp_path):
    pytest.importorskip("pandas")
    out = tmp_path / "swept"
    study = dict(TINY, schemes=["pre"], seeds=[1], sweep={"train.lr": [0.003, 0.01],
                                                            "model.width": [5, 7]})
    normlab.run(study, out=out, quiet=True)
    frames = normlab.results(out)
    runs, results = frames["runs"], frames["results"]
    assert sorted(zip(runs["lr"], runs["width"])) == [(0.003, 5), (0.003, 7), (0.01, 5), (0.01, 7)]
    assert runs["lr"].dtype.kind == "f" and runs["width"].dtype.kind == "i"
    assert set(runs["base_variant"]) == {"pre"}
    # The documented example (docs/python.md): a metric's mean per scheme and length.
    table = results[(results.weights == "raw") & (results.metric == "tvd")].groupby(
        ["scheme", "length"]).value.mean().unstack("scheme")
    assert list(table.columns) == ["pre"] and list(table.index) == [2, 5]
    by_lr = results[results.metric == "tvd"].groupby("lr").value.mean()
    assert list(by_lr.index) == [0.003, 0.01]
