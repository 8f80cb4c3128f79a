"""normlab.results and normlab.claims: a results folder as pandas DataFrames."""

import json
import os
import sqlite3
from typing import Dict


def results(out) -> Dict[str, "pandas.DataFrame"]:
    """Every table of OUT/results.sqlite (experiments, runs, results, curves, probes; the schema
    is in docs/store.md), each a DataFrame; curves also carry their run's variant and seed, and
    runs and results every [sweep] key as a typed column ("lr" for train.lr) and
    `base_variant`, the variant without its sweep point."""
    import pandas as pd

    out = os.fspath(out)
    db = os.path.join(out, "results.sqlite")
    if not os.path.isfile(db):
        raise ValueError(f"{out}: no results.sqlite; allowed: a folder written by normlab run")
    frames = {}
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
        names = [r[0] for r in con.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        for name in names:
            frames[name] = pd.read_sql_query(f'SELECT * FROM "{name}"', con)
    if "runs" in frames and "values_json" in frames["runs"]:
        _add_sweep_columns(frames)
    if "curves" in frames and "runs" in frames and "hash" in frames["runs"]:
        runs = frames["runs"][["hash", "variant", "seed"]].rename(columns={"hash": "run_hash"})
        frames["curves"] = frames["curves"].merge(runs, on="run_hash", how="left")
    return frames


def _typed(text):
    """A sweep value as the label writes it ("0.003", "true", "pre") as a number, bool or str."""
    if not isinstance(text, str):
        return text
    if text in ("true", "false"):
        return text == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _add_sweep_columns(frames):
    """Every [sweep] key as a typed column of runs and results (named by its last part, "lr" for
    train.lr, unless that name is taken), and `base_variant`, the variant without its sweep point
    ("pre" for "pre lr=0.003")."""
    runs = frames["runs"]
    points = [json.loads(v) for v in runs["values_json"]]
    keys = sorted({k for p in points for k in p if k not in ("variant", "seed")})
    taken = set(runs.columns) | set(frames.get("results", runs).columns)
    names = {}
    for key in keys:
        short = key.split(".")[-1]
        names[key] = short if short not in taken and list(
            k.split(".")[-1] for k in keys).count(short) == 1 else key
    for key, name in names.items():
        runs[name] = [_typed(p.get(key)) for p in points]
    runs["base_variant"] = [
        " ".join(v.split(" ")[: len(v.split(" ")) - sum(k in p for k in keys)])
        for v, p in zip(runs["variant"], points)
    ]
    if "results" in frames and "run_hash" in frames["results"]:
        extra = runs[["hash", "base_variant"] + list(names.values())].rename(
            columns={"hash": "run_hash"})
        frames["results"] = frames["results"].merge(extra, on="run_hash", how="left")


def claims(out) -> "pandas.DataFrame":
    """The claims ledger OUT/claims.json (written by `normlab claims run`): one row per claim
    with its paper, verdict, effect and 95% interval (low, high). A verdict is reproduced,
    contradicted, inconclusive, "untestable (ceiling)" or "untestable (floor)" (design rule D1,
    docs/claims.md); `informative` is the number of informative lengths beyond training (<NA>
    where D1 does not govern the claim) and `informativeness` D1's check as claims.json gives
    it, with m(n), f and c per length."""
    import pandas as pd

    out = os.fspath(out)
    path = out if out.endswith(".json") else os.path.join(out, "claims.json")
    if not os.path.isfile(path):
        raise ValueError(f"{out}: no claims.json; allowed: a folder written by normlab claims run")
    with open(path) as f:
        ledger = json.load(f)
    rows = ledger.get("claims") if isinstance(ledger, dict) else None
    if not isinstance(rows, list):
        raise ValueError(f"{path}: not a claims ledger (no 'claims' list)")
    columns = ["id", "paper", "verdict", "informative", "effect", "low", "high", "n", "sentence",
               "study"]
    frame = pd.DataFrame(rows)
    if "informativeness" in frame.columns:
        frame["informative"] = pd.array([c.get("informative") if isinstance(c, dict) else None
                                         for c in frame["informativeness"]], dtype="Int64")
    return frame[[c for c in columns if c in frame.columns] +
                 [c for c in frame.columns if c not in columns]]
