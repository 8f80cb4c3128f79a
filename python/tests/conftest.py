"""Shared fixtures: the normlab program of this build and small checkpoints made by it."""

import json
import os
import struct
import subprocess

import numpy as np
import pytest

import normlab
from normlab import _paths


def normlab_cli(*args: str) -> str:
    """Runs this build's normlab program; returns stdout, fails the test on a non-zero exit."""
    r = subprocess.run([_paths.NORMLAB_BINARY, *args], capture_output=True, text=True)
    assert r.returncode == 0, f"normlab {' '.join(args)}: {r.stderr}"
    return r.stdout


def read_safetensors(path: str) -> dict:
    """float32 tensors of a safetensors file (numpy only, no torch)."""
    with open(path, "rb") as f:
        data = f.read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    header.pop("__metadata__", None)
    out = {}
    for name, t in header.items():
        a, b = t["data_offsets"]
        out[name] = np.frombuffer(data[8 + n + a:8 + n + b], dtype=np.float32).reshape(t["shape"])
    return out


@pytest.fixture
def checkpoint(tmp_path):
    """A function making a checkpoint with `normlab init ARGS` in a fresh folder."""
    count = [0]

    def make(*args: str) -> str:
        count[0] += 1
        out = str(tmp_path / f"ck{count[0]}")
        normlab_cli("init", *args, "--out", out)
        return out

    return make
