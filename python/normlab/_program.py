"""Calling this build's `normlab` program: its progress passed through, its one-line error
messages raised as Python exceptions (ValueError for invalid usage, exit code 2; RuntimeError
for a failure while running, exit code 1)."""

import subprocess
import sys
from typing import List

from . import _paths


def call(args: List[str], quiet: bool) -> str:
    """Runs `normlab ARGS`; returns its output (also printed line by line unless quiet)."""
    proc = subprocess.Popen([_paths.NORMLAB_BINARY] + args, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, bufsize=1)
    last_error, lines, held = "", [], []
    for line in proc.stdout:
        lines.append(line)
        if line.startswith("normlab: "):
            # An error is raised, not printed (it would show twice); a message of a run that
            # ends well is printed at its end.
            last_error = line[len("normlab: "):].strip()
            held.append(line)
        elif not quiet:
            sys.stdout.write(line)
            sys.stdout.flush()
    code = proc.wait()
    if code == 0 and not quiet:
        sys.stdout.write("".join(held))
        sys.stdout.flush()
    if code == 2:
        raise ValueError(last_error or f"normlab {args[0]}: invalid usage")
    if code != 0:
        raise RuntimeError(last_error or f"normlab {args[0]} exited with {code}")
    return "".join(lines)


def option_args(options: dict) -> List[str]:
    """Keyword options as command-line options: max_memory=64 -> --max-memory 64, a list ->
    comma-separated values, True -> the flag alone, False -> left out, task_params={k: v} ->
    --task-param k=v for each."""
    args: List[str] = []
    for key, value in options.items():
        flag = "--" + key.replace("_", "-")
        if key == "task_params":
            for k, v in value.items():
                args += ["--task-param", f"{k}={v}"]
        elif isinstance(value, bool):
            if value:
                args.append(flag)
        elif isinstance(value, (list, tuple)):
            args += [flag, ",".join(str(v) for v in value)]
        elif value is not None:
            args += [flag, str(value)]
    return args
