#!/usr/bin/env python3
"""Writes the seed corpora of the harnesses whose inputs are made of parts or of binary fields
(fuzz/fuzz_experiment_overrides.cpp, fuzz_claims.cpp, fuzz_store_query.cpp,
fuzz_python_args.cpp) from the repository's own files: experiments/*.toml, claims/*.toml,
docs/full-tier, docs/store.md and the tests' queries. Run from anywhere:

    python3 fuzz/make_corpus.py

It replaces the seeds it writes (files named seed_*) and keeps every other file of a corpus
(regression_* inputs of bugs found). Parts are separated by a line "%%" (fuzz/fuzz_parts.hpp).
"""

import pathlib
import struct

ROOT = pathlib.Path(__file__).resolve().parent.parent
CORPUS = ROOT / "fuzz" / "corpus"
SEP = b"\n%%\n"
MAX_LEN = 16384  # the harnesses' -max_len: a longer seed would be cut


def text(path):
    return (ROOT / path).read_bytes()


def head(path, limit):
    """The first whole lines of a file, at most `limit` bytes."""
    out = b""
    for line in text(path).splitlines(keepends=True):
        if len(out) + len(line) > limit:
            break
        out += line
    return out


def rows(path, **keep):
    """The header of a CSV file and its rows whose columns hold one of the values in `keep`."""
    header, *lines = text(path).decode().splitlines(keepends=True)
    names = header.strip().split(",")
    out = header
    for line in lines:
        cells = dict(zip(names, line.strip().split(",")))
        if all(cells.get(column) in values for column, values in keep.items()):
            out += line
    return out.encode()


def claims_subset(path, first, count):
    """A claims file with its header and `count` of its [[claim]] tables from index `first`."""
    header, *claims = text(path).split(b"[[claim]]")
    return header + b"".join(b"[[claim]]" + c for c in claims[first:first + count])


def write(name, seeds):
    folder = CORPUS / name
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("seed_*"):
        old.unlink()
    for seed_name, parts in seeds.items():
        data = SEP.join(parts) if isinstance(parts, list) else parts
        assert len(data) <= MAX_LEN, f"{name}/{seed_name}: {len(data)} bytes"
        (folder / f"seed_{seed_name}").write_bytes(data)


def experiment_overrides():
    # (experiment file, base file, --set and --tier= parts)
    grid = b"[sweep]\ntrain.lr = [0.003, 0.01]\nmodel.heads = [1, 3]\n"
    return {
        "quick_extends_sweep": [
            b'extends = "base.toml"\nname = "quick_grid"\n\n[train]\nsteps = 200\n\n' + grid,
            text("experiments/quick.toml"), b"train.steps=100", b"seeds=[1, 2]"],
        "tomita_sweep_tier_set": [
            text("experiments/resharpen_tomita.toml")
            + b"\n[sweep]\ntrain.lr = [1e-3, 3e-3]\ntrain.warmup = [10, 20]\n",
            b"", b"--tier=full", b"task.n=3", b'train.schedule="cosine"'],
        "dict_extends_tier": [
            b'extends = "base.toml"\n\n[tier.quick.train]\nsteps = 50\n\n'
            b"[sweep]\nmodel.mlp_mult = [2, 4]\n",
            text("experiments/vanishing_variance_dict.toml"), b"--tier=quick"],
        "depth_set_sweep": [
            b'extends = "base.toml"\nname = "depth_grid"\n',
            text("experiments/depth_charlm_L16.toml"), b"sweep.train.lr=[0.001, 0.002]",
            b"sweep.model.layers=[4, 8]", b"--tier=quick"],
        "width_plain": [text("experiments/resharpen_width.toml")],
        "particles_extends": [
            b'extends = "base.toml"\n', text("experiments/particles_symmetric.toml")],
        "quick_cycle": [
            b'extends = "base.toml"\n', b'extends = "experiment.toml"\n' + text("experiments/quick.toml")],
    }


def claims():
    full = "docs/full-tier/"
    return {
        "variance_features_fit": [
            text("claims/2504.02827.toml"),
            text(full + "vanishing_variance_dict-full/features_fit.csv"),
            text(full + "vanishing_variance_dict-full/experiment.json")],
        "resharpen_dilution_fit": [
            claims_subset("claims/2510.08341.toml", 0, 6),
            text(full + "resharpen_set_complement-full/dilution_fit.csv"),
            text(full + "resharpen_set_complement-full/experiment.json")],
        "resharpen_tomita_results": [
            claims_subset("claims/2510.08341.toml", 9, 4),
            rows(full + "resharpen_tomita-full__task.n=1/results.csv", variant={"pre", "peri"},
                 weights={"raw"}, metric={"roc_auc"}),
            text(full + "resharpen_tomita-full__task.n=1/experiment.json")],
        "particles_summary": [
            text("claims/2510.22026.toml"),
            text(full + "particles_symmetric/particles_summary.csv")],
        "depth_blocks": [
            text("claims/2603.15031.toml"),
            head(full + "depth_charlm_L16-full/depth_blocks.csv", 4000),
            text(full + "depth_charlm_L16-full/experiment.json")],
        "file_2510.08341_tail": claims_subset("claims/2510.08341.toml", 13, 40)[:MAX_LEN],
        "file_2603.15031": text("claims/2603.15031.toml"),
    }


def store_query():
    queries = {
        "docs_mean_by_variant":
            "SELECT variant, AVG(value) FROM results WHERE metric = 'tvd' GROUP BY variant",
        "docs_runs": "SELECT * FROM runs",
        "docs_curves_join": "SELECT r.variant, r.seed, c.step, c.val_loss FROM curves c "
                            "JOIN runs r ON r.hash = c.run_hash ORDER BY r.variant, c.step",
        "docs_provenance": "SELECT name, version, git_commit, host, started_at, finished_at "
                           "FROM experiments",
        "docs_sweep_values": "SELECT json_extract(values_json, '$.\"train.lr\"') FROM runs",
        "summary_means": "SELECT metric, variant, weights, length, printf('%.4f', AVG(value)) AS "
                         "mean, COUNT(value) AS seeds FROM results GROUP BY metric, variant, "
                         "weights, length ORDER BY metric, variant, weights, length",
        "summary_status": "SELECT status, COUNT(*) AS runs FROM runs GROUP BY status ORDER BY status",
        "integrity_check": "PRAGMA integrity_check",
        "table_info": "PRAGMA table_info(results)",
        "user_version": "PRAGMA user_version",
        "comment_after": "SELECT 1; -- a comment",
        "probe_content": "SELECT probe, format, length(content), content FROM probes",
        "recursive_limit": "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c "
                           "LIMIT 100) SELECT x, x * x FROM c",
        "recursive_endless": "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
                             "SELECT COUNT(*) FROM c",
        "vacuum_into": "VACUUM INTO 'copy.sqlite'",
        "two_statements": "SELECT 1; DROP TABLE runs",
        "attach": "ATTACH 'x.sqlite' AS x",
        "pragma_set": "PRAGMA user_version = 3",
        "delete": "DELETE FROM runs",
    }
    return {name: sql.encode() for name, sql in queries.items()}


class Provider:
    """Bytes that LLVM's FuzzedDataProvider reads back as the values given: integers from the
    end (least significant byte last), byte strings from the front."""

    def __init__(self):
        self.front, self.back = b"", []

    def integer(self, value, lo, hi):
        span, shift = hi - lo, 0
        out = []
        while shift < 64 and (span >> shift) > 0:
            out.append(0)
            shift += 8
        v = value - lo
        for i in range(len(out)):  # the first byte read is the most significant
            out[i] = (v >> (8 * (len(out) - 1 - i))) & 0xFF
        self.back += out

    def raw(self, data):
        self.front += data

    def bytes(self):
        return self.front + bytes(reversed(self.back))


DTYPES = ["i1", "<i2", "<i4", ">i4", "<i8", ">i8", "u1", "<u2", "<u4", "<u8", ">u8", "?",
          "<f2", "<f4", "<f8", "<c8"]
PACK = {"<i8": "<q", "<i4": "<i", "<f4": "<f", "u1": "B", "<u8": "<Q"}


def array(p, dtype, shape, values, layout=0):
    p.integer(DTYPES.index(dtype), 0, len(DTYPES) - 1)
    p.integer(len(shape), 0, 4)
    for extent in shape:
        p.integer(extent, 0, 20)
    p.integer(layout, 0, 6)
    data = b"".join(struct.pack(PACK[dtype], v) for v in values)
    p.integer(len(data), 0, 256)
    p.raw(data)


def call(model, method, *arrays):
    p = Provider()
    p.integer(model, 0, 1)
    p.integer(method, 0, 2)
    for i, a in enumerate(arrays):
        if a is None:
            p.integer(0, 0, 255)  # grads without weight
            continue
        if method == 2 and i == 2:
            p.integer(1, 0, 255)  # grads with weight
        array(p, *a)
    if method == 2 and len(arrays) == 2:
        p.integer(0, 0, 255)
    return p.bytes()


def python_args():
    # As in python/tests: token ids of the models' vocabularies (5 and 7), -1 for empty fields
    # and unscored targets.
    return {
        "forward_tokens_T": call(0, 0, ("<i8", [4], [1, 2, 3, 4])),
        "forward_tokens_BT": call(0, 0, ("<i8", [2, 3], [0, 1, 2, 3, 4, 0])),
        "forward_fields_BTF": call(1, 0, ("<i4", [1, 3, 2], [1, -1, 2, 3, 6, -1], 0)),
        "forward_fortran_u8": call(1, 0, ("u1", [2, 4], [0, 1, 2, 3, 4, 5, 6, 0], 1)),
        "cache_tokens_BT": call(0, 1, ("<i8", [1, 5], [4, 3, 2, 1, 0])),
        "forward_uint64": call(0, 0, ("<u8", [3], [1, 2, 3])),
        "grads_int_targets": call(0, 2, ("<i8", [1, 4], [1, 2, 3, 4]),
                                  ("<i8", [1, 4], [2, 3, 4, -1]), None),
        "grads_soft_weight": call(1, 2, ("<i8", [1, 2], [1, 2]),
                                  ("<f4", [1, 2, 7], [0.5, 0.5, 0, 0, 0, 0, 0,
                                                      0, 0, 0, 1, 0, 0, 0]),
                                  ("<f4", [1, 2], [1.0, 0.5])),
        "forward_too_long": call(0, 0, ("<i8", [9], [1] * 9)),
    }


if __name__ == "__main__":
    write("experiment_overrides", experiment_overrides())
    write("claims", claims())
    write("store_query", store_query())
    write("python_args", python_args())
