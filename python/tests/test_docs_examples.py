"""Every fenced code block of README.md and docs/*.md runs (docs/design.md, "Examples run"):

- ```python blocks of one file run in order, in one namespace;
- ```sh blocks run under bash with this build's normlab first on PATH;
- ```bash blocks that need Slurm (sbatch) are checked with `bash -n` only;
- ```toml experiment files are resolved by `normlab run --dry-run`; a fragment ([[variant]],
  [tier.*], [sweep]) is added to a small experiment first; a claims file is read by
  `normlab claims list`.

They run in a folder of their own that stands in for the repository: experiments/quick.toml is
the shipped file with 200 steps, one seed and 64 samples per length (the examples' paths and
names stay as written; the numbers are not the study's), results/claims-quick/claims.json and
docs/claims.json are the repository's docs/claims.json."""

import os
import re
import shutil
import subprocess

import pytest

import normlab
from normlab import _paths

FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
SLURM_ONLY = "sbatch"


def doc_files():
    docs = os.path.join(_paths.SOURCE_DIR, "docs")
    names = ["README.md"] + sorted("docs/" + n for n in os.listdir(docs) if n.endswith(".md"))
    return [n for n in names if FENCE.search(read(n))]


def read(name):
    with open(os.path.join(_paths.SOURCE_DIR, name)) as f:
        return f.read()


def blocks(name, language):
    return [code for lang, code in FENCE.findall(read(name)) if lang == language]


def replace_once(text, old, new):
    assert text.count(old) == 1, f"experiments/quick.toml: expected one {old!r}"
    return text.replace(old, new)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    """A folder laid out like the repository, holding a small results/quick."""
    root = tmp_path_factory.mktemp("docs")
    quick = read("experiments/quick.toml")
    for old, new in (("steps = 20000", "steps = 200"), ("seeds = [1, 2, 3]", "seeds = [1]"),
                     ("samples = 1000", "samples = 64")):
        quick = replace_once(quick, old, new)
    (root / "experiments").mkdir()
    (root / "experiments" / "quick.toml").write_text(quick)
    for folder in ("docs", "results/claims-quick"):
        (root / folder).mkdir(parents=True)
        shutil.copy(os.path.join(_paths.SOURCE_DIR, "docs", "claims.json"), root / folder)
    normlab.run(str(root / "experiments" / "quick.toml"), out=str(root / "results" / "quick"),
                quiet=True)
    bin_dir = root / "bin"
    bin_dir.mkdir()
    os.symlink(_paths.NORMLAB_BINARY, bin_dir / "normlab")
    return root


def run_bash(workspace, code, *flags):
    env = dict(os.environ, PATH=f"{workspace / 'bin'}:{os.environ['PATH']}")
    r = subprocess.run(["bash", "-euo", "pipefail", *flags, "-c", code], cwd=workspace, env=env,
                       capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, f"{code}\n{r.stderr}"
    return r


@pytest.mark.parametrize("name", [n for n in doc_files() if blocks(n, "python")])
def test_python_blocks_run(name, workspace, monkeypatch):
    pytest.importorskip("pandas")
    pytest.importorskip("torch")
    monkeypatch.chdir(workspace)
    namespace = {"__name__": "__main__"}
    for i, code in enumerate(blocks(name, "python")):
        exec(compile(code, f"{name}, python block {i + 1}", "exec"), namespace)


@pytest.mark.parametrize("name", [n for n in doc_files() if blocks(n, "sh") + blocks(n, "bash")])
def test_shell_blocks_run(name, workspace):
    for code in blocks(name, "sh") + blocks(name, "bash"):
        if SLURM_ONLY in code:
            run_bash(workspace, code, "-n")
        else:
            run_bash(workspace, code)


SMALL = """name = "fragment"
schemes = ["pre", "post"]
seeds = [1]
[task]
name = "set_complement"
v = 6
[model]
width = 5
mlp = false
[train]
steps = 10
lengths = [1, 3]
[eval]
lengths = [2, 5]
"""


@pytest.mark.parametrize("name", [n for n in doc_files() if blocks(n, "toml")])
def test_toml_blocks_are_valid(name, workspace, tmp_path):
    for i, code in enumerate(blocks(name, "toml")):
        path = tmp_path / f"block{i + 1}.toml"
        if re.search(r"^\[\[claim\]\]", code, re.M):
            (tmp_path / "claims").mkdir(exist_ok=True)
            (tmp_path / "claims" / "example.toml").write_text(code)
            r = subprocess.run([_paths.NORMLAB_BINARY, "claims", "list", "--claims",
                                str(tmp_path / "claims")], cwd=_paths.SOURCE_DIR,
                               capture_output=True, text=True)
        else:
            whole = re.search(r"^name = ", code, re.M) is not None
            if whole:
                text = code
            elif code.lstrip().startswith("[[variant]]"):
                text = SMALL.replace('schemes = ["pre", "post"]\n', "") + code
            else:
                text = SMALL + code
            path.write_text(text)
            r = subprocess.run([_paths.NORMLAB_BINARY, "run", str(path), "--dry-run", "--out",
                                str(tmp_path / f"out{i + 1}")], cwd=workspace,
                               capture_output=True, text=True)
        assert r.returncode == 0, f"{name}, toml block {i + 1}:\n{code}\n{r.stderr}"
