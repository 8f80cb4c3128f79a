"""normlab.results and normlab.claims: a results folder as pandas DataFrames."""

import json
import os
import sqlite3
from typing import Dict


def results(out) -> Dict[str, "pandas.DataFrame"]:
    """Every table of OUT/results.sqlite (experiments, runs, results, curves, probes; the schema
    is in docs/store.md), each a DataFrame. runs and results are the store's tidy views: each
    carries its run's main settings (task, layers, width, heads, pos, steps, batch, lr,
    train_max_len), every [sweep] key as a typed column ("warmup" for train.warmup) and
    `base_variant`, the variant without its sweep point. curves also carry their run's variant
    and seed."""
    import pandas as pd

    out = os.fspath(out)
    db = os.path.join(out, "results.sqlite")
    if not os.path.isfile(db):
        raise ValueError(f"{out}: no results.sqlite; allowed: a folder written by normlab run")
    frames = {}
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
        names = [r[0] for r in con.execute(
            "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') ORDER BY name")]
        tidy = {"runs": "tidy_runs", "results": "tidy"}
        for name in names:
            if name in tidy.values():
                continue
            source = tidy[name] if tidy.get(name) in names else name
            frames[name] = pd.read_sql_query(f'SELECT * FROM "{source}"', con)
    if "curves" in frames and "runs" in frames and "hash" in frames["runs"]:
        runs = frames["runs"][["hash", "variant", "seed"]].rename(columns={"hash": "run_hash"})
        frames["curves"] = frames["curves"].merge(runs, on="run_hash", how="left")
    return frames


def claims(out) -> "pandas.DataFrame":
    """The claims ledger OUT/claims.json (written by `normlab claims run`): one row per claim
    with its paper, kind ("claim", "finding" or "negative control"), verdict, effect and 95%
    interval (low, high). A verdict is reproduced, contradicted, inconclusive, "untestable
    (ceiling)" or "untestable (floor)" (design rule D1, docs/claims.md); a finding's (a quantity
    measured with no side expected) is measured, inconclusive or untestable. `informative` is
    the number of informative lengths beyond training (<NA> where D1 does not govern the claim)
    and `informativeness` D1's check as claims.json gives it, with m(n), f and c per length."""
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
    columns = ["id", "paper", "kind", "verdict", "informative", "effect", "low", "high", "n",
               "sentence", "study"]
    frame = pd.DataFrame(rows)
    if "kind" not in frame.columns:  # a ledger written before findings
        frame["kind"] = ["finding" if c.get("expect") == "measure" else
                         "negative control" if c.get("negative_control") else "claim"
                         for c in rows]
    checks = frame["informativeness"] if "informativeness" in frame.columns else [None] * len(frame)
    frame["informative"] = pd.array([c.get("informative") if isinstance(c, dict) else None
                                     for c in checks], dtype="Int64")
    return frame[[c for c in columns if c in frame.columns] +
                 [c for c in frame.columns if c not in columns]]
