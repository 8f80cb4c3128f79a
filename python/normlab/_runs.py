"""normlab.run and normlab.train: the program's `run` and `train`, with its progress and resume."""

import math
import os
import re
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
    return "".join(text + "\n" for text, _ in _toml_lines(experiment, prefix)).lstrip("\n")


def _toml_lines(experiment: dict, prefix: str = ""):
    """The TOML lines of a dict, each with the dotted key it writes (None for a blank line)."""
    lines, tables = [], []
    for key, value in experiment.items():
        if isinstance(value, dict):
            tables.append((key, value))
        else:
            lines.append((f"{key} = {_toml_value(value, prefix + key)}", prefix + key))
    for key, table in tables:
        name = prefix + key
        lines += [("", None), (f"[{name}]", name)]
        lines += _toml_lines(table, name + ".")
    return lines


def _dict_error(message: str, path: str, keys: dict) -> str:
    """The program's message about the temporary file written from a dict, naming the dict's
    key instead: "PATH:LINE: text" -> "experiment['train']['steps']: text"."""
    match = re.match(re.escape(path) + r":(\d+):\s*(.*)", message, re.S)
    if match and int(match.group(1)) in keys:
        where = "experiment" + "".join(f"[{k!r}]" for k in keys[int(match.group(1))].split("."))
        return f"{where}: {match.group(2)}"
    return message.replace(path, "the experiment dict")


def run(experiment: Union[str, os.PathLike, dict], out: Optional[str] = None,
        tier: Optional[str] = None, sets: Iterable[str] = (), jobs: Optional[int] = None,
        quiet: bool = False) -> str:
    """Runs an experiment (a TOML file, or a dict of the same structure) like `normlab run`:
    the same progress lines, and run again to resume; finished runs are kept. Returns the
    results folder, for normlab.results(out)."""
    keys = {}  # line number of the TOML written from a dict -> the dotted key it writes
    with tempfile.TemporaryDirectory(prefix="normlab-") as tmp:
        if isinstance(experiment, dict):
            path = os.path.join(tmp, f"{experiment.get('name', 'experiment')}.toml")
            lines = _toml_lines(experiment)
            while lines and lines[0][0] == "":
                lines.pop(0)
            keys = {n + 1: key for n, (_, key) in enumerate(lines) if key is not None}
            with open(path, "w") as f:
                f.write("".join(text + "\n" for text, _ in lines))
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
        try:
            call(args, quiet)
        except (ValueError, RuntimeError) as e:
            if not keys:
                raise
            raise type(e)(_dict_error(str(e), path, keys)) from None
    return os.fspath(out)


def train(run_dir: Union[str, os.PathLike], resume: bool = True, quiet: bool = False) -> str:
    """Trains one prepared run folder (holding run.json) like `normlab train --resume`."""
    args = ["train", os.fspath(run_dir)] + (["--resume"] if resume else [])
    call(args, quiet)
    return os.fspath(run_dir)
