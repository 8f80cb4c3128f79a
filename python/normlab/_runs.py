"""normlab.run and normlab.train: the program's `run` and `train`, with its progress and resume."""

import math
import os
import tempfile
from typing import Iterable, Optional, Union

from ._program import call


def _toml_value(value, where: str) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{where}: {value}; allowed: a finite number")
        return repr(value)
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v, where) for v in value) + "]"
    raise ValueError(f"{where}: a {type(value).__name__}; allowed: bool, int, float, str, list, "
                     "or a dict for a table")


def to_toml(experiment: dict, prefix: str = "") -> str:
    """An experiment given as a dict (the TOML file's structure) written as TOML."""
    lines, tables = [], []
    for key, value in experiment.items():
        if isinstance(value, dict):
            tables.append((key, value))
        else:
            lines.append(f"{key} = {_toml_value(value, prefix + key)}")
    for key, table in tables:
        name = prefix + key
        lines.append(f"\n[{name}]")
        lines.append(to_toml(table, name + ".").strip("\n"))
    return "\n".join(lines) + "\n"


def run(experiment: Union[str, os.PathLike, dict], out: Optional[str] = None,
        tier: Optional[str] = None, sets: Iterable[str] = (), jobs: Optional[int] = None,
        quiet: bool = False) -> str:
    """Runs an experiment (a TOML file, or a dict of the same structure) like `normlab run`:
    the same progress lines, and run again to resume; finished runs are kept. Returns the
    results folder, for normlab.results(out)."""
    with tempfile.TemporaryDirectory(prefix="normlab-") as tmp:
        if isinstance(experiment, dict):
            path = os.path.join(tmp, f"{experiment.get('name', 'experiment')}.toml")
            with open(path, "w") as f:
                f.write(to_toml(experiment))
        else:
            path = os.fspath(experiment)
        args = ["run", path]
        if tier is not None:
            args += ["--tier", tier]
        for s in sets:
            args += ["--set", s]
        if jobs is not None:
            args += ["--jobs", str(jobs)]
        if out is None:
            raise ValueError("out: required from Python (the program's default depends on the "
                             "current directory)")
        args += ["--out", os.fspath(out)]
        call(args, quiet)
    return os.fspath(out)


def train(run_dir: Union[str, os.PathLike], resume: bool = True, quiet: bool = False) -> str:
    """Trains one prepared run folder (holding run.json) like `normlab train --resume`."""
    args = ["train", os.fspath(run_dir)] + (["--resume"] if resume else [])
    call(args, quiet)
    return os.fspath(run_dir)
