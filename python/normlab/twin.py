#!/usr/bin/python3
"""The PyTorch twin of normlab's model (docs/twin.md), exported as normlab.to_torch.

An independent re-implementation of src/model/model.cpp in PyTorch eager mode. Autograd gives
the backward pass, so agreement with normlab's hand-written backward kernels is evidence for
both. The model is built only from the config stored in a checkpoint's safetensors
__metadata__["normlab_config"], and its parameters are checked name by name and shape by shape
against the layout that config implies.

Letters: B batch, T length, D width, H heads, dh = D / H, V vocab, L layers, M = mlp_mult * D.

Modes:
  twin.py --check CKPT_DIR GRADS_FILE [CKPT_DIR GRADS_FILE ...]
      Loads each checkpoint and the `normlab grads` file written from it (float32, or float64
      from `normlab grads --double`), runs forward, the weighted soft-target cross-entropy and
      backward on the file's tokens/target/weight in float64 (the reference) and in float32 (in
      several batch orders), and prints one line per tensor (logits, loss, grad.NAME): normlab's
      and PyTorch's float32 errors against the reference and the bound, then OK or FAIL. Exit
      code 0 iff every tensor of every pair is within its bound, 1 if one is not, 2 for
      unreadable or inconsistent inputs, 77 if PyTorch cannot be imported.
  twin.py --bench PRESET [--steps N] [--warmup N] [--repeats R] [--json]
      Training steps in eager PyTorch on one thread (forward, loss, backward, clip, AdamW) on
      random tokens with next-token targets; prints steps/s and tokens/s.
  twin.py --eval CKPT_DIR --tokens "3 1 4 1 5" [--double]
      Prints the logits of one sequence as JSON {"logits": [[V values], ...]}, like
      `normlab forward`.

The bound on normlab's error, the same for every tensor of every case (docs/twin.md, "The
bound"; EPS32 below):
    bound = sqrt(K) * (err_torch + eps32 * max|ref|)          (normlab in float32)
    bound = sqrt(K) * (err_torch + eps32 * max|ref|) * eps64 / eps32   (normlab in float64)
with ref the twin in float64, err_torch the largest error of the twin in float32 over several
batch orders, and K the number of roundings that can accumulate into one element of the tensor
(reduction_length).
"""

import argparse
import ctypes
import json
import math
import os
import sys
import time
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Tuple

# Exit code 77 (the usual "skipped" code of test drivers) when PyTorch is absent, so that the
# CTest cross-check can report a visible skip without a separate `import torch` probe.
EXIT_NO_TORCH = 77
try:
    import numpy as np
    import torch
    import torch.nn.functional as F
except ImportError as _e:
    if __name__ != "__main__":
        raise  # imported by normlab.to_torch: its caller sees the ImportError
    print(f"twin.py: python3-torch is absent for {sys.executable} ({_e}); "
          "install Debian's python3-torch", file=sys.stderr)
    sys.exit(EXIT_NO_TORCH)

# --------------------------------------------------------------------------------------------
# safetensors, read by hand (the `safetensors` package is not in Debian 12):
#   8 bytes little-endian u64 N, N bytes JSON header, then raw little-endian float32 data.
# --------------------------------------------------------------------------------------------


class TwinError(Exception):
    """A problem with an input file or option, reported as one line."""


SAFETENSORS_DTYPES = {"F32": np.dtype("<f4"), "F64": np.dtype("<f8")}


def read_safetensors(path: str) -> Tuple[Dict[str, np.ndarray], Dict[str, str]]:
    """Returns ({name: float32 or float64 array}, __metadata__)."""
    try:
        with open(path, "rb") as f:
            blob = f.read()
    except OSError as e:
        raise TwinError(f"{path}: cannot read ({e.strerror})")
    if len(blob) < 8:
        raise TwinError(f"{path}: {len(blob)} bytes, too short for a safetensors header")
    n = int.from_bytes(blob[:8], "little")
    if 8 + n > len(blob):
        raise TwinError(f"{path}: header length {n} exceeds the file size {len(blob)}")
    try:
        header = json.loads(blob[8:8 + n].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise TwinError(f"{path}: header is not valid JSON ({e})")
    data = memoryview(blob)[8 + n:]
    metadata = header.pop("__metadata__", {}) or {}
    tensors = {}
    for name, info in header.items():
        if info.get("dtype") not in SAFETENSORS_DTYPES:
            raise TwinError(f"{path}: tensor '{name}' has dtype {info.get('dtype')}, "
                            "only F32 and F64 are read")
        dtype = SAFETENSORS_DTYPES[info["dtype"]]
        shape = [int(s) for s in info["shape"]]
        begin, end = (int(o) for o in info["data_offsets"])
        count = int(np.prod(shape)) if shape else 1
        if end - begin != dtype.itemsize * count or end > len(data):
            raise TwinError(f"{path}: tensor '{name}' offsets [{begin}, {end}) do not fit shape {shape}")
        tensors[name] = np.frombuffer(data[begin:end], dtype=dtype).reshape(shape).copy()
    return tensors, metadata


# --------------------------------------------------------------------------------------------
# Config: the fields of normlab::ModelConfig (include/normlab/model/model_config.hpp, to_json()).
# --------------------------------------------------------------------------------------------

CONFIG_FIELDS = {
    "vocab": int, "width": int, "heads": int, "layers": int, "mlp": bool, "mlp_mult": int,
    "activation": str, "causal": bool, "pos": str, "max_len": int, "rope_base": float,
    "beta": float, "embed_scale": float, "dropout": float, "embed_dropout": float, "sinusoid_from_end": bool,
    "attn_dropout": float, "tied": bool, "final_norm": str, "embed_norm": str,
    "scheme": str, "norm": str, "mix_layers": int, "block_size": int, "norm_eps": float, "init_std": float,
    "scaled_residual_init": bool, "ngpt_alpha_init": float, "attn_norms": str,
    "mlp_norms": str, "placement": str, "qk_norm": str, "streams": int, "sinkhorn": bool,
    "weight_init": str, "embed_init_std": float, "mlp_bias": bool, "readout_bias": bool,
}
SCHEME_REVISION_KEY = "scheme_revision"
# Fields that checkpoints written before they existed lack, with the value they then meant.
OPTIONAL_CONFIG_FIELDS = {"attn_norms": "auto", "mlp_norms": "auto", "placement": "",
                          "qk_norm": "none", "streams": 4, "sinkhorn": False,
                          "embed_scale": 1.0, "dropout": 0.0, "embed_dropout": 0.0, "sinusoid_from_end": False,
                          "attn_dropout": 0.0, "weight_init": "normal", "embed_init_std": 0.0,
                          "mlp_bias": False, "readout_bias": False}


def parse_config(meta: Dict[str, str], where: str) -> dict:
    if "normlab_config" not in meta:
        raise TwinError(f"{where}: no model config: __metadata__ has no 'normlab_config'")
    try:
        raw = json.loads(meta["normlab_config"])
    except json.JSONDecodeError as e:
        raise TwinError(f"{where}: the model config in __metadata__ is not valid JSON ({e})")
    cfg = {}
    for key, typ in CONFIG_FIELDS.items():
        if key not in raw and key not in OPTIONAL_CONFIG_FIELDS:
            raise TwinError(f"{where}: model config has no field '{key}'")
        value = raw.get(key, OPTIONAL_CONFIG_FIELDS.get(key))
        if typ is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if not isinstance(value, typ) or (typ is int and isinstance(value, bool)):
            raise TwinError(f"{where}: model config field '{key}' is {value!r}, expected {typ.__name__}")
        cfg[key] = value
    # The scheme's revision (scheme_table.hpp, SchemeRow::revision): beside the fields, written
    # only when above 1; a model of another revision computes something else.
    revision = raw.get(SCHEME_REVISION_KEY, 1)
    if not isinstance(revision, int) or isinstance(revision, bool):
        raise TwinError(f"{where}: model config field '{SCHEME_REVISION_KEY}' is {revision!r}, "
                        "expected int")
    row = SCHEMES.get(cfg["scheme"])
    if row is not None and revision != row.revision:
        raise TwinError(f"{where}: the model was made with {cfg['scheme']} revision {revision}; "
                        f"the twin implements revision {row.revision}; retrain it")
    unknown = set(raw) - set(CONFIG_FIELDS) - {SCHEME_REVISION_KEY}
    if unknown:
        # A newer normlab: fields the twin does not know may change the model. Refuse.
        raise TwinError(f"{where}: model config has fields the twin does not know: {sorted(unknown)}")
    if cfg["width"] % cfg["heads"] != 0:
        raise TwinError(f"{where}: heads {cfg['heads']} do not divide width {cfg['width']}")
    if cfg["weight_init"] not in ("normal", "truncated_fan_in"):
        raise TwinError(f"{where}: weight_init '{cfg['weight_init']}'; allowed: normal, "
                        "truncated_fan_in")
    if cfg["qk_norm"] not in ("none", "l2", "rmsnorm"):
        raise TwinError(f"{where}: qk_norm '{cfg['qk_norm']}'; allowed: none, l2, rmsnorm")
    return cfg


# --------------------------------------------------------------------------------------------
# Schemes: the table of src/model/scheme.cpp. One row per scheme; each sublayer's slots say
#   u = N_in(x);  y = f(u);  z = N_out(y);  r = a*x + b*z
#   (or nGPT r = xh + |alpha|*(z - xh), xh = N_x(x));  out = N_post(r)
# --------------------------------------------------------------------------------------------


@dataclass
class Slots:
    norm_in: bool = False
    norm_out: bool = False
    norm_post: bool = False
    # The factors of the add: ("constant", value), or ("vector" | "scalar", init) learnable.
    residual: Tuple[str, float] = ("constant", 1.0)  # a, on x
    branch: Tuple[str, float] = ("constant", 1.0)  # b, on z
    input_scale: float = 1.0  # on f's input
    interpolate: bool = False  # nGPT
    kind_in: str = ""  # each norm's kind; "" is the model's norm
    kind_out: str = ""
    kind_post: str = ""


def parse_norms(text: str) -> Optional[Dict[str, str]]:
    """Norm slots (model_config.hpp, NormPlacement): None for "auto", else {slot: kind} with
    kind "" for the model's norm."""
    if text == "auto":
        return None
    if text == "none":
        return {}
    out: Dict[str, str] = {}
    for item in text.split("+"):
        slot, _, kind = item.partition(":")
        if slot not in ("in", "out", "post") or slot in out:
            raise TwinError(f"norm placement '{text}': bad or repeated slot '{slot}'")
        out[slot] = kind
    return out


@dataclass
class Rule:
    """One rule of the placement language (docs/schemes.md, "Placements")."""
    target: str  # all, attn, mlp, embed, final
    first: int = 0
    end: int = 1 << 62
    norms: Optional[Dict[str, str]] = None
    scales: Dict[str, Tuple[str, float]] = field(default_factory=dict)  # residual/branch/input
    on: Optional[bool] = None  # embed, final


def parse_scale(text: str) -> Tuple[str, float]:
    if text == "1/sqrt(l+1)":
        return ("inverse_sqrt_layer", 1.0)
    for kind in ("vector", "scalar"):
        if text.startswith(kind + "(") and text.endswith(")"):
            return (kind, float(text[len(kind) + 1:-1]))
    return ("constant", float(text))


def parse_rules(text: str) -> List[Rule]:
    rules: List[Rule] = []
    if not text.strip():
        return rules
    for rule_text in text.split(";"):
        close = rule_text.find("]")  # a layer range [FIRST:END] has a colon of its own
        colon = rule_text.find(":", max(close, 0))
        head, settings = rule_text[:colon].strip(), rule_text[colon + 1:]
        rule = Rule(target=head.split("[")[0].strip())
        if "[" in head:
            first, _, end = head.split("[")[1].rstrip("]").partition(":")
            rule.first = int(first)
            rule.end = int(end) if end.strip() else rule.end
        if rule.target not in ("all", "attn", "mlp", "embed", "final"):
            raise TwinError(f"placement '{text}': unknown target '{rule.target}'")
        for setting in (x.strip() for x in settings.split(",")):
            if rule.target in ("embed", "final"):
                rule.on = {"on": True, "off": False}[setting]
            elif "=" in setting:
                key, _, value = setting.partition("=")
                rule.scales[key.strip()] = parse_scale(value.strip())
            else:
                rule.norms = parse_norms(setting)
        rules.append(rule)
    return rules


@dataclass
class SchemeRow:
    placement: Callable[[dict], str]  # the preset, in the placement language
    final_default: bool = True  # final norm unless the config says on/off
    embed_default: bool = False  # embedding norm unless the config says on/off
    residual_mode: str = "additive"  # key of RESIDUAL_MODES
    # nGPT: interpolation, unit-norm weights, no weight decay, s_z on the logits, q/k on the unit
    # sphere with s_qk after RoPE, s_uv on the MLP's pre-activation (ngpt_scales below)
    ngpt: bool = False
    branch_init: Callable[[dict], float] = lambda cfg: 1.0  # init factor of v, o, up, down
    qkv_norm: bool = False  # HybridNorm: q, k and v normalized per head with the model's norm
    two_stream: str = ""  # key of TWO_STREAMS: a second residual stream (resiDual, SiameseNorm)
    hyper: bool = False  # n residual streams mixed by learned weights (hyper_streams below)
    # ResFormer's value residual: attention n > 1 reads the values (V_n + V_1) / 2
    value_residual: bool = False
    revision: int = 1  # the row's revision, scheme_revision in the config when above 1


def fixed(text: str) -> Callable[[dict], str]:
    return lambda cfg: text


# The scheme table of src/model/scheme_table.cpp, written again here from docs/schemes.md.
SCHEMES: Dict[str, SchemeRow] = {
    "pre": SchemeRow(fixed("all: in")),
    "post": SchemeRow(fixed("all: post"), final_default=False),
    "peri": SchemeRow(fixed("all: in+out")),
    "peri_init": SchemeRow(fixed("all: in+out"), embed_default=True),
    # The vanishing-variance placement: only the attention output is normalized.
    "post_attn": SchemeRow(fixed("attn: out")),
    "mix": SchemeRow(lambda c: f"all: in; all[0:{c['mix_layers']}]: post"),
    "ngpt": SchemeRow(fixed("all: out+post"), final_default=False, ngpt=True, revision=2),
    "sqrt_scaling": SchemeRow(fixed("all: in, branch=1/sqrt(l+1)")),
    "deepnorm": SchemeRow(lambda c: f"all: post, residual={(2.0 * c['layers']) ** 0.25!r}",
                          final_default=False,
                          branch_init=lambda c: (8.0 * c["layers"]) ** -0.25),
    # AttnRes (docs/reference.md §4, docs/attnres.md): pre-norm slots; each sublayer's input and the
    # final stream are softmax mixtures over depth (RESIDUAL_MODES below).
    "attnres": SchemeRow(fixed("all: in"), residual_mode="attnres"),
    "block_attnres": SchemeRow(fixed("all: in"), residual_mode="block_attnres"),
    "sandwich": SchemeRow(fixed("all: in+out")),
    "pre_and_post": SchemeRow(fixed("all: in+post"), final_default=False),
    "reordered": SchemeRow(fixed("all: out")),
    "layernorm_scaling": SchemeRow(fixed("all: in, input=1/sqrt(l+1)")),
    "layerscale": SchemeRow(fixed("all: in, branch=vector(0.1)")),
    "rezero": SchemeRow(fixed("all: none, branch=scalar(0)"), final_default=False),
    # HybridNorm: x + attn(x) with per-head norms on q, k, v; then N(y) + mlp(N(y)), which is
    # the attention's post-norm followed by a plain MLP sublayer.
    "hybridnorm": SchemeRow(fixed("attn: post"), qkv_norm=True),
    # Two residual streams (TWO_STREAMS below, which write their blocks out in full; the slots
    # here only name the per-sublayer norms of the layout).
    "resi_dual": SchemeRow(fixed("all: post"), final_default=False, two_stream="resi_dual"),
    "siamesenorm": SchemeRow(fixed("all: in"), two_stream="siamesenorm"),
    # Hyper-connections and mHC (hyper_streams below, written out from the papers; the slots
    # give each sublayer its pre-norm).
    "hyper_connections": SchemeRow(fixed("all: in"), hyper=True),
    # ResFormer (arXiv 2410.17897): pre-norm; V_1 is the first attention's values after its head
    # norms (Twin.attention).
    "resformer": SchemeRow(fixed("all: in"), value_residual=True),
    "custom": SchemeRow(fixed(""), final_default=False),
}


@dataclass
class HeadNorms:
    """Per-head norms inside attention (docs/schemes.md, "QK-norm"): which of q, k, v, their
    kind, and whether q carries a learnable scale per head (the l2 QK-norm)."""
    parts: Tuple[str, ...] = ()  # subset of ("q", "k", "v")
    kind: str = "rmsnorm"
    learned_scale: bool = False
    scale_init: float = 10.0


def resolve_head_norms(cfg: dict, row: SchemeRow) -> HeadNorms:
    if row.qkv_norm:
        return HeadNorms(("q", "k", "v") if cfg["norm"] != "none" else (), cfg["norm"])
    if cfg["qk_norm"] == "none":
        return HeadNorms()
    if row.ngpt:
        raise TwinError("qk_norm with scheme ngpt is refused by normlab (it normalizes q and k "
                        "itself)")
    return HeadNorms(("q", "k"), cfg["qk_norm"], learned_scale=cfg["qk_norm"] == "l2")


@dataclass
class Resolved:
    sublayers: List[Slots]
    embed_norm: bool
    final_norm: bool
    residual_mode: str
    unit_norm_weights: bool
    weight_decay: bool
    logit_scale: bool
    branch_init_scale: float
    head_norms: HeadNorms
    two_stream: str
    hyper: bool
    ngpt: bool = False  # nGPT's s_qk (q, k on the unit sphere after RoPE) and s_uv
    value_residual: bool = False  # ResFormer: attention n > 1 reads (V_n + V_1) / 2


def resolve_scheme(cfg: dict) -> Resolved:
    if cfg["scheme"] not in SCHEMES:
        raise TwinError(f"scheme '{cfg['scheme']}' is not in the twin (has: {', '.join(SCHEMES)})")
    row = SCHEMES[cfg["scheme"]]
    if row.qkv_norm and cfg["qk_norm"] != "none":
        raise TwinError(f"qk_norm with scheme {cfg['scheme']} is refused by normlab")
    rules = parse_rules(row.placement(cfg))
    for key, target in (("attn_norms", "attn"), ("mlp_norms", "mlp")):
        norms = parse_norms(cfg[key])
        if norms is not None:
            rules.append(Rule(target=target, norms=norms))
    rules += parse_rules(cfg["placement"])
    per_layer = 2 if cfg["mlp"] else 1
    subs = []
    for l in range(cfg["layers"]):
        for s in range(per_layer):
            slots = Slots(interpolate=row.ngpt)
            for rule in rules:
                kind_matches = rule.target == "all" or rule.target == ("attn" if s == 0 else "mlp")
                if not kind_matches or not rule.first <= l < rule.end:
                    continue
                if rule.norms is not None:
                    slots.norm_in, slots.kind_in = "in" in rule.norms, rule.norms.get("in", "")
                    slots.norm_out, slots.kind_out = "out" in rule.norms, rule.norms.get("out", "")
                    slots.norm_post, slots.kind_post = ("post" in rule.norms,
                                                        rule.norms.get("post", ""))
                for key, (kind, value) in rule.scales.items():
                    if kind == "inverse_sqrt_layer":
                        kind, value = "constant", 1.0 / math.sqrt(l + 1.0)
                    if key == "input":
                        slots.input_scale = value
                    else:
                        setattr(slots, key, (kind, value))
            if cfg["norm"] == "none":  # slots of the model's kind are no norm
                slots.norm_in &= slots.kind_in not in ("", "none")
                slots.norm_out &= slots.kind_out not in ("", "none")
                slots.norm_post &= slots.kind_post not in ("", "none")
            subs.append(slots)
    has_norm = cfg["norm"] != "none"
    final_default, embed_default = row.final_default, row.embed_default
    for rule in rules:
        if rule.target == "final":
            final_default = rule.on
        if rule.target == "embed":
            embed_default = rule.on

    def toggle(value: str, default: bool) -> bool:
        return {"on": True, "off": False, "auto": default}[value]

    return Resolved(sublayers=subs,
                    embed_norm=has_norm and toggle(cfg["embed_norm"], embed_default),
                    final_norm=has_norm and toggle(cfg["final_norm"], final_default),
                    residual_mode=row.residual_mode,
                    unit_norm_weights=row.ngpt,
                    weight_decay=not row.ngpt,
                    logit_scale=row.ngpt,
                    branch_init_scale=row.branch_init(cfg),
                    head_norms=resolve_head_norms(cfg, row),
                    two_stream=row.two_stream,
                    hyper=row.hyper,
                    ngpt=row.ngpt,
                    value_residual=row.value_residual)


# --------------------------------------------------------------------------------------------
# Parameter layout: names, shapes and init of every tensor, in normlab's order (model.cpp,
# build_layout). Checkpoints must match it exactly.
# --------------------------------------------------------------------------------------------


@dataclass
class Spec:
    name: str
    shape: Tuple[int, ...]
    decay: bool = False  # AdamW weight decay applies
    init: str = "normal"  # "normal" (std = value), "truncated_normal" (std = value, cut at
    # +-2 std, not rescaled), "constant" or "values" (one per element)
    value: float = 0.0
    unit_norm: str = "none"  # nGPT: "last" = rows unit norm, "first" = columns unit norm
    values: Optional[List[float]] = None  # init "values", row-major


def norm_has_gain(kind: str) -> bool:
    return kind in ("layernorm", "rmsnorm", "dyt", "derf")


def norm_has_bias(kind: str) -> bool:
    return kind in ("layernorm", "dyt", "derf")


def norm_scalars(kind: str, D: int) -> List[Tuple[str, float]]:
    """The kind's scalar parameters (each a tensor of shape (1)) with their inits, in
    normlab's order: DyT alpha 0.5; Derf alpha 0.5, shift 0; ScaleNorm scale sqrt(D)."""
    if kind == "dyt":
        return [("alpha", 0.5)]
    if kind == "derf":
        return [("alpha", 0.5), ("shift", 0.0)]
    if kind == "scalenorm":
        return [("scale", math.sqrt(D))]
    return []


def ngpt_scales(cfg: dict) -> Dict[str, Tuple[float, float]]:
    """nGPT's learnable scales as (stored init, factor): the model uses stored * factor
    (alpha: |stored| * factor), as in the reference (NVIDIA/ngpt). base = 1/sqrt(D); in use at
    init: alpha = ngpt_alpha_init, s_qk = 1, s_uv = sqrt(D), s_z = 1."""
    root = math.sqrt(cfg["width"])
    base = 1.0 / root
    return {"alpha": (base, cfg["ngpt_alpha_init"] / base), "s_qk": (base, 1.0 / base),
            "s_uv": (1.0, root), "s_z": (base, 1.0 / base)}


def build_layout(cfg: dict, rs: Resolved) -> List[Spec]:
    V, D, M = cfg["vocab"], cfg["width"], cfg["mlp_mult"] * cfg["width"]
    rows = "last" if rs.unit_norm_weights else "none"
    cols = "first" if rs.unit_norm_weights else "none"
    # weight_init "truncated_fan_in": std 1/sqrt(fan_in) per matrix, every matrix and embedding
    # a normal truncated at +-2 std (model_layout.cpp).
    fan_in = cfg["weight_init"] == "truncated_fan_in"
    drawn = "truncated_normal" if fan_in else "normal"

    def matrix_std(n: int) -> float:
        return 1.0 / math.sqrt(n) if fan_in else cfg["init_std"]

    deepnorm = cfg["scheme"] == "deepnorm"  # its own init rule replaces GPT-2's

    def residual_of(n: int) -> float:
        s = matrix_std(n)
        return s / math.sqrt(2.0 * cfg["layers"]) if cfg["scaled_residual_init"] and not deepnorm else s

    std = matrix_std(D)
    embed_std = cfg["embed_init_std"] if cfg["embed_init_std"] > 0 else cfg["init_std"]
    branch = rs.branch_init_scale
    out: List[Spec] = []

    def add_norm(prefix: str, active: bool, kind: str = "", size: int = D) -> None:
        if not active:
            return
        kind = kind or cfg["norm"]
        if norm_has_gain(kind):
            out.append(Spec(prefix + ".weight", (size,), init="constant", value=1.0))
        if norm_has_bias(kind):
            out.append(Spec(prefix + ".bias", (size,), init="constant", value=0.0))
        for name, value in norm_scalars(kind, size):  # no weight decay, like gains and biases
            out.append(Spec(prefix + "." + name, (1,), init="constant", value=value))

    out.append(Spec("embed.weight", (V, D), True, drawn, embed_std, rows))
    if cfg["pos"] == "learned":
        out.append(Spec("pos.weight", (cfg["max_len"], D), True, drawn, embed_std, rows))
    add_norm("embed_norm", rs.embed_norm)
    per_layer = 2 if cfg["mlp"] else 1
    attnres = rs.residual_mode in ("attnres", "block_attnres")

    def add_res_mix(query: str, norm: str) -> None:
        # AttnRes pseudo-query (init 0) and the gain of the RMSNorm on the keys (init 1).
        out.append(Spec(query, (D,), init="constant", value=0.0))
        out.append(Spec(norm + ".weight", (D,), init="constant", value=1.0))

    def add_hyper(prefix: str, i: int) -> None:
        """Hyper-connections' weights of sublayer i (docs/schemes.md, "Hyper-connections"):
        HC's static alpha = [e_(i mod n) | I], beta = 1, dynamic projections 0, scales 0.01;
        mHC's projections 0, gates 0.01, b_pre -8 but 0 at stream i mod n, b_post 0, b_res -8
        off the diagonal and 0 on it. None is weight-decayed."""
        n = cfg["streams"]
        first = i % n
        if not cfg["sinkhorn"]:
            add_norm(prefix + ".norm", True)
            alpha = [[1.0 if c == 0 and s == first else 1.0 if c == s + 1 else 0.0
                      for c in range(n + 1)] for s in range(n)]
            out.append(Spec(prefix + ".static_alpha", (n, n + 1), init="values",
                            values=[v for row in alpha for v in row]))
            out.append(Spec(prefix + ".static_beta", (n,), init="constant", value=1.0))
            out.append(Spec(prefix + ".dynamic_alpha_fn", (D, n + 1), init="constant", value=0.0))
            out.append(Spec(prefix + ".dynamic_alpha_scale", (1,), init="constant", value=0.01))
            out.append(Spec(prefix + ".dynamic_beta_fn", (D,), init="constant", value=0.0))
            out.append(Spec(prefix + ".dynamic_beta_scale", (1,), init="constant", value=0.01))
            return
        out.append(Spec(prefix + ".phi_pre", (n * D, n), init="constant", value=0.0))
        out.append(Spec(prefix + ".phi_post", (n * D, n), init="constant", value=0.0))
        out.append(Spec(prefix + ".phi_res", (n * D, n * n), init="constant", value=0.0))
        for gate in ("alpha_pre", "alpha_post", "alpha_res"):
            out.append(Spec(f"{prefix}.{gate}", (1,), init="constant", value=0.01))
        out.append(Spec(prefix + ".b_pre", (n,), init="values",
                        values=[0.0 if s == first else -8.0 for s in range(n)]))
        out.append(Spec(prefix + ".b_post", (n,), init="constant", value=0.0))
        out.append(Spec(prefix + ".b_res", (n, n), init="values",
                        values=[0.0 if a == b else -8.0 for a in range(n) for b in range(n)]))

    for i, slots in enumerate(rs.sublayers):
        attention = i % per_layer == 0
        prefix = f"layers.{i // per_layer}.{'attn' if attention else 'mlp'}"
        if attnres:
            add_res_mix(prefix + ".res_query", prefix + ".res_norm")
        # SiameseNorm: N_x on the stream x before the sublayer, N_y on y where f reads it;
        # nGPT's N_x(x) in the interpolation is of the post slot's kind.
        add_norm(prefix + ".x_norm", rs.two_stream == "siamesenorm" or slots.interpolate,
                 slots.kind_post if slots.interpolate else "")
        add_norm(prefix + ".y_norm", rs.two_stream == "siamesenorm")
        if rs.hyper:
            add_hyper(prefix + ".hc", i)
        add_norm(prefix + ".norm_in", slots.norm_in, slots.kind_in)
        if attention:
            out.append(Spec(prefix + ".q.weight", (D, D), True, drawn, std, rows))
            out.append(Spec(prefix + ".k.weight", (D, D), True, drawn, std, rows))
            out.append(Spec(prefix + ".v.weight", (D, D), True, drawn, std * branch, rows))
            out.append(Spec(prefix + ".o.weight", (D, D), True, drawn, residual_of(D) * branch,
                            cols))
            if cfg["pos"] == "relative":  # Transformer-XL's u, v ~ N(0, 0.02^2) and W_R
                out.append(Spec(prefix + ".rel_u", (D,), init="normal", value=0.02))
                out.append(Spec(prefix + ".rel_v", (D,), init="normal", value=0.02))
                out.append(Spec(prefix + ".rel.weight", (D, D), True, drawn, std))
            # Per-head norms over dh features, shared by the heads; then the l2 QK-norm's
            # scale per head.
            hn = rs.head_norms
            for part in ("q", "k", "v"):
                add_norm(f"{prefix}.{part}_norm", part in hn.parts, hn.kind, D // cfg["heads"])
            if hn.learned_scale:
                out.append(Spec(prefix + ".qk_scale", (cfg["heads"],), init="constant",
                                value=hn.scale_init))
            if rs.ngpt:
                out.append(Spec(prefix + ".s_qk", (D,), init="constant",
                                value=ngpt_scales(cfg)["s_qk"][0]))
        else:
            # mlp_bias: each projection's bias (constant 0, not decayed) after its weight.
            out.append(Spec(prefix + ".up.weight", (M, D), True, drawn, std * branch, rows))
            if cfg["mlp_bias"]:
                out.append(Spec(prefix + ".up.bias", (M,), init="constant", value=0.0))
            out.append(Spec(prefix + ".down.weight", (D, M), True, drawn,
                            residual_of(M) * branch, cols))
            if cfg["mlp_bias"]:
                out.append(Spec(prefix + ".down.bias", (D,), init="constant", value=0.0))
            if rs.ngpt:
                out.append(Spec(prefix + ".s_uv", (M,), init="constant",
                                value=ngpt_scales(cfg)["s_uv"][0]))
        add_norm(prefix + ".norm_out", slots.norm_out, slots.kind_out)
        add_norm(prefix + ".norm_post", slots.norm_post, slots.kind_post)
        for name, (kind, value) in (("residual_scale", slots.residual),
                                    ("branch_scale", slots.branch)):
            if kind in ("vector", "scalar"):  # LayerScale, ReZero: learnable, not decayed
                out.append(Spec(f"{prefix}.{name}", (D if kind == "vector" else 1,),
                                init="constant", value=value))
        if slots.interpolate:
            out.append(Spec(prefix + ".alpha", (D,), init="constant",
                            value=ngpt_scales(cfg)["alpha"][0]))
    if attnres:
        add_res_mix("final_res.query", "final_res.norm")
    if rs.two_stream:  # the output: N(x) + N(y) (SiameseNorm) or x + N(y) (resiDual)
        add_norm("merge.x_norm", rs.two_stream == "siamesenorm")
        add_norm("merge.y_norm", True)
    add_norm("final_norm", rs.final_norm)
    if not cfg["tied"]:
        out.append(Spec("unembed.weight", (V, D), True, drawn, std, rows))
    if cfg["readout_bias"]:  # the logits' bias (V), constant 0, not decayed
        out.append(Spec("unembed.bias", (V,), init="constant", value=0.0))
    if rs.logit_scale:
        out.append(Spec("logit_scale", (V,), init="constant", value=ngpt_scales(cfg)["s_z"][0]))
    return out


# --------------------------------------------------------------------------------------------
# Building blocks, each the formula of its normlab kernel header (src/core/kernels/*.hpp).
# --------------------------------------------------------------------------------------------


def normalize(kind: str, x: torch.Tensor, gain: Optional[torch.Tensor],
              bias: Optional[torch.Tensor], eps: float, alpha: Optional[torch.Tensor] = None,
              shift: Optional[torch.Tensor] = None,
              scale: Optional[torch.Tensor] = None) -> torch.Tensor:
    """Rows of the last axis. eps is inside the square root for every kind that has one.
    layernorm   (x - mu) / sqrt(mean((x - mu)^2) + eps) * g + b
    standardize (x - mu) / sqrt(mean((x - mu)^2) + eps)           (layernorm without params)
    rmsnorm     x / sqrt(mean(x^2) + eps) * g
    l2          x / sqrt(sum(x^2) + eps)                          (no params)
    scalenorm   scale * x / sqrt(sum(x^2) + eps)                  (scale a scalar)
    dyt         tanh(alpha * x) * g + b                           (alpha a scalar; no eps)
    derf        erf(alpha * x + shift) * g + b                    (alpha, shift scalars; no eps)
    """
    D = x.shape[-1]
    if kind in ("layernorm", "standardize"):
        return F.layer_norm(x, (D,), gain, bias, eps)  # biased variance, eps inside the sqrt
    if kind == "rmsnorm":
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * gain
    if kind == "l2":
        return x * torch.rsqrt(x.pow(2).sum(-1, keepdim=True) + eps)
    if kind == "scalenorm":
        return scale * x * torch.rsqrt(x.pow(2).sum(-1, keepdim=True) + eps)
    if kind == "dyt":
        return torch.tanh(alpha * x) * gain + bias
    if kind == "derf":
        return torch.erf(alpha * x + shift) * gain + bias
    if kind == "none":
        return x
    raise TwinError(f"unknown norm kind '{kind}'")


def sinusoid_table(T: int, D: int, from_end: bool = False) -> np.ndarray:
    """PE[t, d] = sin(p_t w_d) for even d, cos(p_t w_d) for odd d, w_d = 10000^(-(d - d % 2) / D),
    p_t = t, or T - t counted from the end (Deletang et al.'s positions T, T-1, ..., 1);
    computed in double like normlab."""
    d = np.arange(D)
    freq = np.power(10000.0, -(d - d % 2).astype(np.float64) / D)
    positions = np.arange(T, 0, -1.0) if from_end else np.arange(T, dtype=np.float64)
    angle = positions[:, None] * freq[None, :]
    return np.where(d % 2 == 0, np.sin(angle), np.cos(angle))


def rope_tables(T: int, dh: int, base: float) -> Tuple[np.ndarray, np.ndarray]:
    """cos, sin of theta[t, p] = t * base^(-2p / dh), (T, dh/2), computed in double."""
    p = np.arange(dh // 2, dtype=np.float64)
    theta = np.arange(T, dtype=np.float64)[:, None] * np.power(base, -2.0 * p / dh)[None, :]
    return np.cos(theta), np.sin(theta)


def alibi_biases(T: int, H: int, causal: bool) -> np.ndarray:
    """(H, T, T) m_h * bias(i, j), ALiBi (Press et al. 2022), written from its definitions, not
    from normlab's kernel: slopes as the official get_slopes; bias(i, j) = -(i - j) causal,
    -|i - j| + 0.5 [j < i] bidirectional (Deletang et al. 2023's encoder)."""
    def power_of_two_slopes(n: int) -> list:
        start = 2.0 ** (-(2.0 ** -(math.log2(n) - 3)))
        return [start * start ** h for h in range(n)]

    def slopes(n: int) -> list:
        if math.log2(n).is_integer():
            return power_of_two_slopes(n)
        p = 2 ** math.floor(math.log2(n))
        return power_of_two_slopes(p) + slopes(2 * p)[0::2][:n - p]

    i = np.arange(T)[:, None]
    j = np.arange(T)[None, :]
    bias = -np.abs(i - j).astype(np.float64)
    if not causal:
        bias += 0.5 * (j < i)
    return np.array(slopes(H))[:, None, None] * bias[None]


def relative_positions(T: int, D: int) -> np.ndarray:
    """(2T, D) sinusoids of the positions T, T-1, ..., -T+1, as the reference's
    sinusoid_position_encoding (Deletang et al. 2023, models/positional_encodings.py) makes them
    for a bidirectional encoder: sines of pos * 10000^(-2k/D), then cosines."""
    inv_freq = np.power(10000.0, -np.arange(0, D, 2, dtype=np.float64) / D)
    pos = np.arange(T, -T, -1.0)
    angle = pos[:, None] * inv_freq[None, :]
    return np.concatenate([np.sin(angle), np.cos(angle)], axis=-1)


def relative_shift(logits: torch.Tensor) -> torch.Tensor:
    """(..., T, 2T) -> (..., T, T): the reference's _rel_shift_inner, entry (i, j) of the
    result the column of position i - j."""
    *lead, T, total = logits.shape
    x = logits.reshape(*lead, total, T)[..., 1:, :]
    return x.reshape(*lead, T, total - 1)[..., :T]


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """x (B, H, T, dh): rotates interleaved pairs (2p, 2p+1) by theta[t, p]:
    (x0, x1) -> (x0 cos - x1 sin, x0 sin + x1 cos)."""
    x0, x1 = x[..., 0::2], x[..., 1::2]  # (B, H, T, dh/2)
    r0 = x0 * cos - x1 * sin
    r1 = x0 * sin + x1 * cos
    return torch.stack((r0, r1), dim=-1).flatten(-2)


def soft_cross_entropy(logits: torch.Tensor, target: torch.Tensor,
                       weight: torch.Tensor) -> torch.Tensor:
    """src/core/kernels/cross_entropy.hpp:
    loss = sum_n w_n sum_v -p_nv log softmax(z_n)_v / sum_n w_n  (0 when sum_n w_n = 0)."""
    V = logits.shape[-1]
    z = logits.reshape(-1, V)
    p = target.reshape(-1, V)
    w = weight.reshape(-1)
    per_row = -(p * F.log_softmax(z, dim=-1)).sum(-1)  # (N)
    total = w.sum()
    if float(total) == 0.0:
        return (per_row * w).sum() * 0.0
    return (per_row * w).sum() / total


# --------------------------------------------------------------------------------------------
# How each sublayer's input x is formed from what came before: called with i = 0..S-1 for the
# input of sublayer i and with i = S for the final stream (before the final norm), where S is
# the number of sublayers. "additive": the previous sublayer's output.
# --------------------------------------------------------------------------------------------


def additive_input(model: "Twin", i: int, embedding: torch.Tensor, outputs: List[torch.Tensor],
                   branches: List[torch.Tensor]) -> torch.Tensor:
    return outputs[-1] if outputs else embedding


def block_attnres_input(model: "Twin", i: int, embedding: torch.Tensor,
                        outputs: List[torch.Tensor], branches: List[torch.Tensor],
                        block_size: Optional[int] = None) -> torch.Tensor:
    """docs/reference.md §4 with blocks of S_b sublayers (attnres: S_b = 1). Sources: the embedding
    b_0, the sums b_n of the branch outputs z of each finished block, and the partial sum of
    the current block when it is not empty. x = sum_k alpha_k b_k with
    alpha = softmax_k(w . RMSNorm_g(b_k)), one query w and gain g per mixing point."""
    c = model.cfg
    size = c["block_size"] if block_size is None else block_size
    done = i // size  # blocks finished among branches[:i]
    sources = [embedding]
    for n in range(done):
        sources.append(sum(branches[n * size:(n + 1) * size]))
    partial = branches[done * size:i]
    if partial:
        sources.append(sum(partial))
    if i == len(model.rs.sublayers):
        query, gain = model.p["final_res.query"], model.p["final_res.norm.weight"]
    else:
        prefix = f"layers.{i // model.per_layer}.{'attn' if i % model.per_layer == 0 else 'mlp'}"
        query, gain = model.p[prefix + ".res_query"], model.p[prefix + ".res_norm.weight"]
    v = torch.stack(sources)  # (K, B, T, D)
    keys = normalize("rmsnorm", v, gain, None, c["norm_eps"])
    alpha = torch.softmax((keys * query).sum(-1), dim=0)  # (K, B, T)
    name = "final_res" if i == len(model.rs.sublayers) else \
        model.hook_block(prefix) + prefix.split(".")[2]
    alpha = model.hook(name + ".hook_res_weights", alpha.permute(1, 2, 0)).permute(2, 0, 1)
    return (alpha.unsqueeze(-1) * v).sum(0)


def attnres_input(model: "Twin", i: int, embedding: torch.Tensor, outputs: List[torch.Tensor],
                  branches: List[torch.Tensor]) -> torch.Tensor:
    """Full AttnRes: every earlier branch output is its own source."""
    return block_attnres_input(model, i, embedding, outputs, branches, block_size=1)


RESIDUAL_MODES: Dict[str, Callable] = {
    "additive": additive_input,
    "attnres": attnres_input,
    "block_attnres": block_attnres_input,
}


# --------------------------------------------------------------------------------------------
# Two residual streams, each block written out from its paper: (model, e) -> the stream that
# enters the final norm, with e the embedding stream (after the embedding norm, if any). F_i is
# sublayer i's attention or MLP, N a norm of the model's kind with its own parameters.
# --------------------------------------------------------------------------------------------


def resi_dual_streams(model: "Twin", e: torch.Tensor) -> torch.Tensor:
    """resiDual (arXiv 2304.14802): x_a <- N(x_a + F(x_a)), x_d <- x_d + F(x_a); the output
    x_a + N(x_d). The dual stream starts as the embedding, as in microsoft/ResiDual
    (resi_dual/resi_dual.py: res = x * res_input_norm_scale, scale 1)."""
    xa, xd = e, e
    for i in range(len(model.rs.sublayers)):
        prefix = model.prefix(i)
        z = model.branch(i, xa)
        xa = model._norm(prefix + ".norm_post", xa + z)
        xd = xd + z
    return xa + model._norm("merge.y_norm", xd)


def siamesenorm_streams(model: "Twin", e: torch.Tensor) -> torch.Tensor:
    """SiameseNorm (arXiv 2602.08064; Qwen-Applications/SiameseNorm, deit-model-siamesenorm.py):
    both streams start as the embedding; per sublayer of layer l, x <- N_post(x),
    z = F(N_in(x + N_pre(y))), x <- x + z / sqrt(2(l+1)), y <- y + z; the output N(x) + N(y)."""
    x, y = e, e
    for i in range(len(model.rs.sublayers)):
        prefix = model.prefix(i)
        layer = i // model.per_layer
        x = model._norm(prefix + ".x_norm", x)
        z = model.branch(i, model._norm(prefix + ".norm_in", x + model._norm(prefix + ".y_norm", y)))
        x = x + z / math.sqrt(2.0 * (layer + 1))
        y = y + z
    return model._norm("merge.x_norm", x) + model._norm("merge.y_norm", y)


TWO_STREAMS: Dict[str, Callable] = {
    "resi_dual": resi_dual_streams,
    "siamesenorm": siamesenorm_streams,
}


# --------------------------------------------------------------------------------------------
# Hyper-connections, written out from the papers: (model, e) -> the stream that enters the
# final norm. H is (B, T, n, D), n residual streams, each the embedding e at first.
# --------------------------------------------------------------------------------------------


SINKHORN_ITERS = 20  # normlab's kSinkhornIters


def sinkhorn_knopp(logits: torch.Tensor, iters: int = SINKHORN_ITERS) -> torch.Tensor:
    """mHC's projection onto doubly stochastic matrices (last two axes): exp, then `iters`
    times every row and then every column divided by its sum. The largest logit of each
    matrix is subtracted first (a common factor, which the normalizations remove)."""
    m = torch.exp(logits - logits.amax(dim=(-2, -1), keepdim=True))
    for _ in range(iters):
        m = m / m.sum(-1, keepdim=True)
        m = m / m.sum(-2, keepdim=True)
    return m


def hyper_streams(model: "Twin", e: torch.Tensor) -> torch.Tensor:
    """Hyper-connections (Zhu et al., arXiv 2409.19606, dynamic, Algorithm 2's code):
        H_bar = norm(H) (per stream), alpha = static_alpha + s_a * tanh(H_bar W_a) (n, n+1),
        beta = static_beta + s_b * tanh(H_bar w_b) (n); [h, H_res] = alpha^T H, h the branch
        input, and H <- beta z + H_res with z = F(N_in(h)).
    mHC (arXiv 2512.24880, eqs. 7-8), with sinkhorn: x' = RMSNorm(vec(H)) (nD, no gain),
        H_pre = sigmoid(a_pre x' phi_pre + b_pre), H_post = 2 sigmoid(a_post x' phi_post + b_post),
        H_res = Sinkhorn-Knopp(a_res mat(x' phi_res) + b_res); h = H_pre H, and
        H <- H_post^T z + H_res H.
    The output is the sum of the streams."""
    c = model.cfg
    n, D = c["streams"], c["width"]
    H = e.unsqueeze(-2).expand(*e.shape[:-1], n, D)  # (B, T, n, D)
    for i in range(len(model.rs.sublayers)):
        prefix = model.prefix(i)
        p = lambda name: model.p[f"{prefix}.hc.{name}"]
        if not c["sinkhorn"]:
            hbar = model._norm(prefix + ".hc.norm", H)
            alpha = p("static_alpha") + p("dynamic_alpha_scale") * torch.tanh(
                hbar @ p("dynamic_alpha_fn"))  # (B, T, n, n+1)
            beta = p("static_beta") + p("dynamic_beta_scale") * torch.tanh(
                hbar @ p("dynamic_beta_fn"))  # (B, T, n)
            mixed = alpha.transpose(-1, -2) @ H  # (B, T, n+1, D)
            h, residual = mixed[..., 0, :], mixed[..., 1:, :]
            z = model.branch(i, model._norm(prefix + ".norm_in", h))
            H = beta.unsqueeze(-1) * z.unsqueeze(-2) + residual
        else:
            flat = H.reshape(*H.shape[:-2], n * D)
            x = flat * torch.rsqrt(flat.pow(2).mean(-1, keepdim=True) + c["norm_eps"])
            pre = torch.sigmoid(p("alpha_pre") * (x @ p("phi_pre")) + p("b_pre"))  # (B, T, n)
            post = 2 * torch.sigmoid(p("alpha_post") * (x @ p("phi_post")) + p("b_post"))
            res = sinkhorn_knopp(p("alpha_res") * (x @ p("phi_res")).reshape(
                *x.shape[:-1], n, n) + p("b_res"))  # (B, T, n, n)
            h = (pre.unsqueeze(-2) @ H).squeeze(-2)  # (B, T, D)
            z = model.branch(i, model._norm(prefix + ".norm_in", h))
            H = post.unsqueeze(-1) * z.unsqueeze(-2) + res @ H
    return H.sum(-2)


# --------------------------------------------------------------------------------------------
# The model.
# --------------------------------------------------------------------------------------------


class Twin(torch.nn.Module):
    def __init__(self, cfg: dict, dtype: torch.dtype = torch.float32):
        super().__init__()
        self.cfg = cfg
        self.rs = resolve_scheme(cfg)
        if self.rs.residual_mode not in RESIDUAL_MODES and not (self.rs.two_stream or
                                                                self.rs.hyper):
            raise TwinError(f"residual mode '{self.rs.residual_mode}' is not in the twin")
        self.layout = build_layout(cfg, self.rs)
        self.dtype = dtype
        # Each parameter sits at its checkpoint name: "layers.0.attn.q.weight" is parameter
        # "weight" of submodule layers/0/attn/q, so state_dict() keys are the checkpoint's
        # tensor names (docs/checkpoint.md).
        self.p: Dict[str, torch.nn.Parameter] = {}
        for spec in self.layout:
            param = torch.nn.Parameter(torch.zeros(spec.shape, dtype=dtype))
            *path, leaf = spec.name.split(".")
            owner: torch.nn.Module = self
            for part in path:
                if not hasattr(owner, part):
                    owner.add_module(part, torch.nn.Module())
                owner = getattr(owner, part)
            owner.register_parameter(leaf, param)
            self.p[spec.name] = param
        self.per_layer = 2 if cfg["mlp"] else 1
        self._tables: Dict[Tuple[str, int], Tuple[torch.Tensor, ...]] = {}
        # Forward hooks at normlab's hook names (docs/python.md, "Hooks"): (matches(name),
        # fn(activation, name) -> replacement or None); offered lists the names reached.
        self.hooks: List[Tuple[Callable[[str], bool], Callable]] = []
        self.offered: List[str] = []

    # ---- parameters

    def init_random(self, generator: torch.Generator) -> None:
        """normlab's init distribution (not its RNG stream): normal(0, std) or constants,
        then the nGPT unit norms."""
        with torch.no_grad():
            for spec in self.layout:
                t = self.p[spec.name]
                if spec.init == "normal":
                    t.copy_(torch.randn(spec.shape, generator=generator, dtype=torch.float64)
                            * spec.value)
                elif spec.init == "truncated_normal":
                    # N(0, 1) redrawn where |z| > 2, as normlab (model_layout.cpp).
                    z = torch.randn(spec.shape, generator=generator, dtype=torch.float64)
                    out = z.abs() > 2.0
                    while bool(out.any()):
                        z[out] = torch.randn(int(out.sum()), generator=generator,
                                             dtype=torch.float64)
                        out = z.abs() > 2.0
                    t.copy_(z * spec.value)
                elif spec.init == "values":
                    t.copy_(torch.tensor(spec.values, dtype=torch.float64).reshape(spec.shape))
                else:
                    t.fill_(spec.value)
        self.apply_weight_constraints()

    def load(self, tensors: Dict[str, np.ndarray], where: str) -> None:
        """Every layout tensor must be present with its shape; no extra tensors."""
        names = {s.name for s in self.layout}
        for spec in self.layout:
            if spec.name not in tensors:
                raise TwinError(f"{where}: missing tensor '{spec.name}' (shape {list(spec.shape)})")
            if tuple(tensors[spec.name].shape) != spec.shape:
                raise TwinError(f"{where}: tensor '{spec.name}' has shape "
                                f"{list(tensors[spec.name].shape)}, the config needs {list(spec.shape)}")
        extra = sorted(set(tensors) - names)
        if extra:
            raise TwinError(f"{where}: tensors the config's model does not have: {extra}")
        with torch.no_grad():
            for spec in self.layout:
                self.p[spec.name].copy_(torch.from_numpy(tensors[spec.name]))

    def apply_weight_constraints(self) -> None:
        """nGPT: rows ("last") or columns ("first") of matrices renormalized to unit norm,
        p / sqrt(sum p^2 + 1e-20)."""
        with torch.no_grad():
            for spec in self.layout:
                if spec.unit_norm == "none":
                    continue
                t = self.p[spec.name]
                dim = 1 if spec.unit_norm == "last" else 0
                t.mul_(torch.rsqrt(t.pow(2).sum(dim, keepdim=True) + 1e-20))

    def param_groups(self, weight_decay: float) -> List[dict]:
        decay = [self.p[s.name] for s in self.layout if s.decay and self.rs.weight_decay]
        other = [self.p[s.name] for s in self.layout if not (s.decay and self.rs.weight_decay)]
        groups = []
        if decay:
            groups.append({"params": decay, "weight_decay": weight_decay})
        if other:
            groups.append({"params": other, "weight_decay": 0.0})
        return groups

    # ---- pieces

    def hook(self, name: str, x: torch.Tensor) -> torch.Tensor:
        """x through every hook at `name`; x itself without one."""
        if not self.hooks:
            return x
        self.offered.append(name)
        for match, fn in self.hooks:
            if match(name):
                out = fn(x, name)
                x = x if out is None else out
        return x

    def _norm_hooked(self, prefix: str, hook_prefix: str, x: torch.Tensor,
                     kind: str = "") -> torch.Tensor:
        """The norm at `prefix` with its hook_scale (B, T, 1), the divisor sqrt(var + eps),
        and hook_normalized at `hook_prefix`."""
        kind = kind or self.cfg["norm"]
        if self.hooks and kind not in ("dyt", "derf", "none"):
            xc = x - x.mean(-1, keepdim=True) if kind in ("layernorm", "standardize") else x
            sq = xc.pow(2).sum(-1, keepdim=True) if kind in ("l2", "scalenorm") else \
                xc.pow(2).mean(-1, keepdim=True)
            y = xc / self.hook(hook_prefix + ".hook_scale", torch.sqrt(sq + self.cfg["norm_eps"]))
            for name in (".weight", ".scale"):
                if prefix + name in self.p:
                    y = y * self.p[prefix + name]
            if prefix + ".bias" in self.p:
                y = y + self.p[prefix + ".bias"]
        else:
            y = self._norm(prefix, x, kind)
        return self.hook(hook_prefix + ".hook_normalized", y)

    @staticmethod
    def hook_block(prefix: str) -> str:
        """"blocks.l." of a sublayer's checkpoint prefix "layers.l.attn"."""
        return "blocks." + prefix.split(".")[1] + "."

    def _norm(self, prefix: str, x: torch.Tensor, kind: str = "") -> torch.Tensor:
        return normalize(kind or self.cfg["norm"], x, self.p.get(prefix + ".weight"),
                         self.p.get(prefix + ".bias"), self.cfg["norm_eps"],
                         alpha=self.p.get(prefix + ".alpha"), shift=self.p.get(prefix + ".shift"),
                         scale=self.p.get(prefix + ".scale"))

    def _table(self, kind: str, T: int) -> Tuple[torch.Tensor, ...]:
        key = (kind, T)
        if key not in self._tables:
            c = self.cfg
            if kind == "sinusoid":
                tabs = (sinusoid_table(T, c["width"], c["sinusoid_from_end"]),)
            elif kind == "rope":
                tabs = rope_tables(T, c["width"] // c["heads"], c["rope_base"])
            elif kind == "alibi":
                tabs = (alibi_biases(T, c["heads"], c["causal"]),)
            elif kind == "relative":
                tabs = (relative_positions(T, c["width"]),)
            else:  # causal mask: True where key j > query i
                tabs = (np.triu(np.ones((T, T), dtype=bool), k=1),)
            self._tables[key] = tuple(
                torch.from_numpy(t) if t.dtype == bool else torch.from_numpy(t).to(self.dtype)
                for t in tabs)
        return self._tables[key]

    def attention(self, prefix: str, u: torch.Tensor) -> torch.Tensor:
        """u (B, T, D) -> y (B, T, D). Packed q|k|v = u [Wq; Wk; Wv]^T, the per-head norms
        (each head's dh features one row; l2 QK-norm: q times s_h), RoPE on q and k,
        S = c q k^T with c = beta (l2 QK-norm) or beta / sqrt(dh), plus ALiBi's biases, or
        relative: S = c ((q + u) k^T + shift((q + v) (p W_R^T)^T)) as the reference computes it
        (compute_attention_with_relative_encodings; its bidirectional shift, which gives distance
        i - j, for causal models too), causal mask, softmax,
        heads concatenated, then Wo."""
        c = self.cfg
        B, T, D = u.shape
        H = c["heads"]
        dh = D // H
        w = torch.cat((self.p[prefix + ".q.weight"], self.p[prefix + ".k.weight"],
                       self.p[prefix + ".v.weight"]), 0)  # (3D, D)
        qkv = u @ w.t()  # (B, T, 3D)
        q, k, v = (t.reshape(B, T, H, dh).transpose(1, 2) for t in qkv.split(D, dim=-1))
        hn = self.rs.head_norms
        if "q" in hn.parts:
            q = self._norm(prefix + ".q_norm", q, hn.kind)  # (B, H, T, dh)
        if "k" in hn.parts:
            k = self._norm(prefix + ".k_norm", k, hn.kind)
        if "v" in hn.parts:
            v = self._norm(prefix + ".v_norm", v, hn.kind)
        if self.rs.value_residual:  # ResFormer: V_1 from the first attention of this forward
            if self._v1 is None:
                self._v1 = v
            else:
                v = 0.5 * (v + self._v1)
        scale = c["beta"] / math.sqrt(dh)
        if hn.learned_scale:
            q = q * self.p[prefix + ".qk_scale"].reshape(1, H, 1, 1)
            scale = c["beta"]
        if c["pos"] == "rope":
            cos, sin = self._table("rope", T)
            q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        if self.rs.ngpt:
            # nGPT: each head of q and k to the unit sphere (l2 over dh, eps inside the root),
            # times s_qk (D viewed (H, dh)), after RoPE; logits beta * sqrt(dh) * q.k.
            _, f = ngpt_scales(c)["s_qk"]
            s_qk = (self.p[prefix + ".s_qk"] * f).reshape(1, H, 1, dh)
            q = s_qk * normalize("l2", q, None, None, c["norm_eps"])
            k = s_qk * normalize("l2", k, None, None, c["norm_eps"])
            scale = c["beta"] * math.sqrt(dh)
        at = self.hook_block(prefix) + "attn."
        q, k, v = (self.hook(at + name, t.transpose(1, 2)).transpose(1, 2)  # hooks: (B, T, H, dh)
                   for name, t in (("hook_q", q), ("hook_k", k), ("hook_v", v)))
        if c["pos"] == "relative":
            u_h = self.p[prefix + ".rel_u"].reshape(1, H, 1, dh)
            v_h = self.p[prefix + ".rel_v"].reshape(1, H, 1, dh)
            keys = self._table("relative", T)[0] @ self.p[prefix + ".rel.weight"].t()  # (2T, D)
            keys = keys.reshape(2 * T, H, dh).transpose(0, 1)  # (H, 2T, dh)
            content = (q + u_h) @ k.transpose(-1, -2)  # (B, H, T, T)
            scores = (content + relative_shift((q + v_h) @ keys.transpose(-1, -2))) * scale
        else:
            scores = (q @ k.transpose(-1, -2)) * scale  # (B, H, T, T)
        if c["pos"] == "alibi":
            scores = scores + self._table("alibi", T)[0]
        if c["causal"]:
            scores = scores.masked_fill(self._table("mask", T)[0], float("-inf"))
        scores = self.hook(at + "hook_attn_scores", scores)
        pattern = self.hook(at + "hook_pattern", torch.softmax(scores, dim=-1))
        o = pattern @ v  # (B, H, T, dh)
        o = self.hook(at + "hook_z", o.transpose(1, 2)).reshape(B, T, D)
        return o @ self.p[prefix + ".o.weight"].t()

    def mlp(self, prefix: str, u: torch.Tensor) -> torch.Tensor:
        """y = W_down act(W_up u + b_up) + b_down (the biases with mlp_bias); GELU is the exact
        erf form."""
        h = u @ self.p[prefix + ".up.weight"].t()  # (B, T, M)
        if self.cfg["mlp_bias"]:  # inside the projection: under nGPT before s_uv
            h = h + self.p[prefix + ".up.bias"]
        if self.rs.ngpt:  # nGPT: the pre-activation times s_uv
            h = h * (self.p[prefix + ".s_uv"] * ngpt_scales(self.cfg)["s_uv"][1])
        block = self.hook_block(prefix)
        h = self.hook(block + "mlp.hook_pre", h)
        h = F.gelu(h) if self.cfg["activation"] == "gelu" else F.relu(h)
        h = self.hook(block + "mlp.hook_post", h)
        y = h @ self.p[prefix + ".down.weight"].t()
        return y + self.p[prefix + ".down.bias"] if self.cfg["mlp_bias"] else y

    def _factor(self, name: str, spec: Tuple[str, float]):
        """A factor of the add: its constant, or the learnable tensor (D) or (1)."""
        return spec[1] if spec[0] == "constant" else self.p[name]

    def prefix(self, i: int) -> str:
        return f"layers.{i // self.per_layer}.{'attn' if i % self.per_layer == 0 else 'mlp'}"

    def branch(self, i: int, u: torch.Tensor) -> torch.Tensor:
        """F_i(u): sublayer i's attention or MLP, no norm."""
        return self.attention(self.prefix(i), u) if i % self.per_layer == 0 else \
            self.mlp(self.prefix(i), u)

    def sublayer(self, i: int, x: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        """The slot update of include/normlab/model/scheme.hpp; returns (out, branch output z)."""
        slots = self.rs.sublayers[i]
        attention = i % self.per_layer == 0
        prefix = f"layers.{i // self.per_layer}.{'attn' if attention else 'mlp'}"
        block, kind = self.hook_block(prefix), "attn" if attention else "mlp"
        ln = block + ("ln1" if attention else "ln2")  # TransformerLens's names
        u = self._norm_hooked(prefix + ".norm_in", ln, x, slots.kind_in) if slots.norm_in else x
        if slots.input_scale != 1.0:
            u = slots.input_scale * u  # layernorm_scaling: N(x) / sqrt(l + 1)
        if u is x and self.hooks:  # f reads the stream itself: its hook sees a copy
            u = x.clone()
        u = self.hook(block + kind + ".hook_in", u)
        y = self.attention(prefix, u) if attention else self.mlp(prefix, u)
        y = self.hook(block + f"hook_{kind}_out", y)
        z = self._norm_hooked(prefix + ".norm_out", ln + "_post", y, slots.kind_out) \
            if slots.norm_out else y
        z = self.hook(block + f"hook_{kind}_out_normed", z)
        if slots.interpolate:  # nGPT: N_x(x) + |alpha| (z - N_x(x))
            xh = self._norm(prefix + ".x_norm", x, slots.kind_post)
            alpha = self.p[prefix + ".alpha"].abs() * ngpt_scales(self.cfg)["alpha"][1]
            r = xh + alpha * (z - xh)
        else:
            r = self._factor(prefix + ".residual_scale", slots.residual) * x + \
                self._factor(prefix + ".branch_scale", slots.branch) * z
        out = self._norm_hooked(prefix + ".norm_post", ln + "_resid", r, slots.kind_post) \
            if slots.norm_post else r
        return out, z

    def run_with_hooks(self, tokens, fwd_hooks=()) -> torch.Tensor:
        """Logits with forward hooks, as normlab.Model.run_with_hooks (docs/python.md,
        "Hooks"): fwd_hooks [(name or predicate on names, fn(activation, hook))], the
        activations torch tensors of normlab's shapes; fn changes one in place or returns its
        replacement."""
        from normlab import _hooks  # the package's, when the twin is normlab.to_torch's

        hooks = _hooks.parse(fwd_hooks)
        self.hooks = [(match, lambda x, name, call=call: call(x, _hooks.HookPoint(name)))
                      for match, call, _ in hooks]
        self.offered = []
        try:
            logits = self.forward(tokens)
        finally:
            self.hooks = []
        _hooks.check_names(hooks, set(self.offered))
        return logits

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """tokens (B, T) or (B, T, F) int64 -> logits (B, T, V). With F fields per position
        the embedding is the sum of the fields' rows; -1 is an empty field (normlab's
        multi-field batches)."""
        c = self.cfg
        tokens = torch.as_tensor(tokens).long()  # int32 from normlab.tasks.generate, numpy
        B, T = tokens.shape[:2]
        self._v1: Optional[torch.Tensor] = None  # the first attention's values (value residual)
        if c["pos"] == "learned" and T > c["max_len"]:
            raise TwinError(f"sequence length {T} exceeds max-len {c['max_len']}")
        if tokens.dim() == 2:
            h = self.p["embed.weight"][tokens]  # (B, T, D)
        else:
            present = (tokens >= 0).unsqueeze(-1).to(self.dtype)  # (B, T, F, 1)
            h = (self.p["embed.weight"][tokens.clamp(min=0)] * present).sum(2)  # (B, T, D)
        h = h * c["embed_scale"]
        if c["pos"] == "learned":
            h = h + self.p["pos.weight"][:T]
        elif c["pos"] == "sinusoidal":
            h = h + self._table("sinusoid", T)[0]
        if self.rs.embed_norm:
            h = self._norm_hooked("embed_norm", "ln_embed", h)
        h = self.hook("hook_embed", h)
        if self.rs.two_stream:
            h = TWO_STREAMS[self.rs.two_stream](self, h)
        elif self.rs.hyper:
            h = hyper_streams(self, h)
        else:
            make_input = RESIDUAL_MODES[self.rs.residual_mode]
            outputs: List[torch.Tensor] = []
            branches: List[torch.Tensor] = []
            S = len(self.rs.sublayers)
            for i in range(S):
                x = make_input(self, i, h, outputs, branches)
                block = f"blocks.{i // self.per_layer}."
                if i > 0 and i % self.per_layer == 0:
                    x = self.hook(f"blocks.{i // self.per_layer - 1}.hook_resid_post", x)
                x = self.hook(block + ("hook_resid_pre" if i % self.per_layer == 0 else
                                       "hook_resid_mid"), x)
                out, z = self.sublayer(i, x)
                outputs.append(out)
                branches.append(z)
            h = make_input(self, S, h, outputs, branches)
            h = self.hook(f"blocks.{(S - 1) // self.per_layer}.hook_resid_post", h)
        if self.rs.final_norm:
            h = self._norm_hooked("final_norm", "ln_final", h)
        unembed = self.p["embed.weight"] if c["tied"] else self.p["unembed.weight"]
        logits = h @ unembed.t()  # (B, T, V)
        if c["readout_bias"]:  # before nGPT's s_z
            logits = logits + self.p["unembed.bias"]
        if self.rs.logit_scale:  # nGPT's s_z
            logits = logits * (self.p["logit_scale"] * ngpt_scales(c)["s_z"][1])
        return logits


# --------------------------------------------------------------------------------------------
# --check
# --------------------------------------------------------------------------------------------


# The bound on normlab's error (docs/twin.md, "The bound"). For each tensor X, with ref the twin
# in float64 and torch32 the twin in float32 on the same float32 parameters and batch:
#     err_normlab = max|normlab − ref|
#     err_torch = max over ORDERS batch orders of max|torch32 − ref|
#     bound = sqrt(K) · (err_torch + eps32 · max|ref|)
# err_torch is this computation's float32 rounding error as PyTorch's arithmetic makes it: it
# carries whatever the tensor's conditioning does to rounding (a gradient that cancels to ~0 is
# noise the size of its cancelling terms, and err_torch is that noise). One order's error of a
# scalar is one random number and can be small by luck; the batch taken in several orders sums
# every reduction over rows (weight and scalar gradients, the loss) differently, and the largest
# of those errors is the typical error. eps32 · max|ref| is the least error any float32 result
# carries (its own rounding), for tensors whose PyTorch error happens to vanish. normlab forms the
# same sums in another order (its own kernels, blocking, FMA): K roundings that accumulate into
# one result (a sum of K terms, or a chain of sums of K terms in all) give a worst-case error of
# K · u · Σ|terms| over all orders and a typical error of sqrt(K) · u · Σ|terms|, so an order's
# error exceeds the typical one by at most sqrt(K), K counted per tensor by reduction_length.
# The same rule with eps64 bounds normlab in double: every rounding error scales with the unit
# roundoff, so bound64 = bound · eps64 / eps32.
EPS32 = 2.0 ** -23
EPS64 = 2.0 ** -52
ORDERS = 4


def reduction_length(cfg: dict, batch: int, length: int, size: int, backward: bool) -> int:
    """K of a tensor of `size` elements: how many roundings can accumulate into one of its
    elements, the sum lengths along the longest path through the S sublayers, forward (logits,
    loss) or forward and backward (gradients). At each of those S or 2S stages the longest sum
    is over the N = B·T rows (a weight gradient), over D, M, V or T (products, softmaxes), or,
    for the gradient of a parameter of `size` elements acting on a whole activation of N rows
    of W values, over N·W / size of them (a scalar's gradient sums N·W terms); mHC adds the
    2·SINKHORN_ITERS normalizations of n entries of its Sinkhorn iterations per stage."""
    N, D, V, H = batch * length, cfg["width"], cfg["vocab"], cfg["heads"]
    M = cfg["mlp_mult"] * D if cfg["mlp"] else 0
    hyper = cfg["scheme"] == "hyper_connections"
    n = cfg["streams"] if hyper else 1
    widest = max(n * D, M, V, H * length)
    longest_sum = max(N, D, M, V, length)
    if backward:  # a parameter's gradient sums over every use of each of its elements
        longest_sum = max(longest_sum, math.ceil(N * widest / max(size, 1)))
    sinkhorn = 2 * SINKHORN_ITERS * n if hyper and cfg["sinkhorn"] else 0
    S = cfg["layers"] * (2 if cfg["mlp"] else 1)
    return (2 if backward else 1) * S * (longest_sum + sinkhorn)


def batch_orders(batch: int) -> List[List[int]]:
    """Up to ORDERS distinct orders of the batch's sequences: as given, reversed, rotated."""
    ident = list(range(batch))
    candidates = [ident, ident[::-1]] + [ident[k:] + ident[:k] for k in range(1, batch)]
    orders: List[List[int]] = []
    for o in candidates:
        if o not in orders:
            orders.append(o)
    return orders[:ORDERS]


def twin_outputs(model: "Twin", tokens: torch.Tensor, target: torch.Tensor,
                 weight: torch.Tensor, order: List[int]) -> Dict[str, torch.Tensor]:
    """logits (in the given batch order), loss and every grad.NAME of the twin, computed on the
    batch's sequences taken in `order`: the same values, summed in another order."""
    idx = torch.tensor(order, dtype=torch.int64)
    logits = model(tokens[idx])
    loss = soft_cross_entropy(logits, target[idx].to(model.dtype), weight[idx].to(model.dtype))
    model.zero_grad(set_to_none=True)
    loss.backward()
    out = {"logits": logits.detach()[torch.argsort(idx)], "loss": loss.detach().reshape(1)}
    for spec in model.layout:
        g = model.p[spec.name].grad
        zero = torch.zeros(spec.shape, dtype=model.dtype)
        out["grad." + spec.name] = zero if g is None else g.detach()
    return out


def max_abs_diff(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a.double() - b.double()).abs().max()) if a.numel() else 0.0


def max_abs(a: torch.Tensor) -> float:
    return float(a.double().abs().max()) if a.numel() else 0.0


def load_model(ckpt_dir: str, dtype: torch.dtype) -> Twin:
    path = ckpt_dir
    if os.path.isdir(ckpt_dir):
        path = os.path.join(ckpt_dir, "model.safetensors")
    tensors, meta = read_safetensors(path)
    model = Twin(parse_config(meta, path), dtype)
    model.load(tensors, path)
    return model


def read_grads_file(grads_file: str, V: int) -> Dict[str, np.ndarray]:
    ref, _ = read_safetensors(grads_file)
    for name in ("tokens", "target", "weight", "logits", "loss"):
        if name not in ref:
            raise TwinError(f"{grads_file}: no tensor '{name}' (is it a `normlab grads` file?)")
    tok = ref["tokens"]
    if tok.ndim not in (2, 3) or not np.all(tok == np.round(tok)):
        raise TwinError(f"{grads_file}: 'tokens' must be (B, T) or (B, T, F) integers")
    if tok.size and (tok.min() < -1 or tok.max() >= V or (tok.ndim == 2 and tok.min() < 0)):
        raise TwinError(f"{grads_file}: tokens outside the checkpoint's vocabulary [0, {V})")
    bt = tok.shape[:2]
    if ref["target"].shape != bt + (V,) or ref["weight"].shape != bt:
        raise TwinError(f"{grads_file}: target {list(ref['target'].shape)} / weight "
                        f"{list(ref['weight'].shape)} do not fit tokens {list(tok.shape)} and V={V}")
    dtypes = {a.dtype for a in ref.values()}
    if len(dtypes) != 1:
        raise TwinError(f"{grads_file}: tensors of mixed dtypes {sorted(str(d) for d in dtypes)}")
    return ref


def check_pair(ckpt_dir: str, grads_file: str) -> bool:
    model64, model32 = load_model(ckpt_dir, torch.float64), load_model(ckpt_dir, torch.float32)
    c = model64.cfg
    normlab = read_grads_file(grads_file, c["vocab"])
    tok = normlab["tokens"]
    as_double = normlab["logits"].dtype == np.float64
    tokens = torch.from_numpy(tok.astype(np.int64))
    target = torch.from_numpy(normlab["target"].astype(np.float32))  # the float32 batch
    weight = torch.from_numpy(normlab["weight"].astype(np.float32))
    B, T = tok.shape[:2]
    ref = twin_outputs(model64, tokens, target, weight, list(range(B)))
    torch_err: Dict[str, float] = {}
    for order in batch_orders(B):
        for name, t in twin_outputs(model32, tokens, target, weight, order).items():
            torch_err[name] = max(torch_err.get(name, 0.0), max_abs_diff(t, ref[name]))
    scale = EPS64 / EPS32 if as_double else 1.0

    print(f"== {ckpt_dir} vs {grads_file}: scheme {c['scheme']}, norm {c['norm']}, "
          f"L={c['layers']} D={c['width']} H={c['heads']} V={c['vocab']} pos={c['pos']}, "
          f"B={B} T={T}{f' F={tok.shape[2]}' if tok.ndim == 3 else ''}, "
          f"normlab in {'float64' if as_double else 'float32'}")
    print("  bound = sqrt(K) * (err_torch + eps32 * max|ref|)"
          + (" * eps64/eps32" if as_double else ""))
    ok = True
    expected = {"grad." + s.name for s in model64.layout}
    present = {n for n in normlab if n.startswith("grad.")}
    for name in sorted(present - expected):
        print(f"  {name:<40} FAIL: in the grads file but not a twin parameter")
        ok = False
    worst = ("", 0.0)
    for name in ["logits", "loss"] + ["grad." + s.name for s in model64.layout]:
        if name not in normlab:
            print(f"  {name:<40} FAIL: missing from the grads file")
            ok = False
            continue
        if tuple(normlab[name].shape) != tuple(ref[name].shape):
            print(f"  {name:<40} FAIL: shape {list(normlab[name].shape)} "
                  f"vs {list(ref[name].shape)}")
            ok = False
            continue
        err = max_abs_diff(torch.from_numpy(normlab[name]), ref[name])
        K = reduction_length(c, B, T, ref[name].numel(), name.startswith("grad."))
        bound = math.sqrt(K) * (torch_err[name] + EPS32 * max_abs(ref[name])) * scale
        ratio = err / bound if bound > 0 else (0.0 if err == 0 else math.inf)
        status = "ok" if ratio <= 1 else "FAIL"  # NaN fails too
        ok = ok and status == "ok"
        if not ratio <= worst[1]:
            worst = (name, ratio)
        print(f"  {name:<44} err_normlab {err:.3e}  err_torch {torch_err[name]:.3e}  "
              f"bound {bound:.3e}  (K {K}, max|ref| {max_abs(ref[name]):.3e})  {status}")
    print(f"  worst: {worst[0]} err_normlab/bound {worst[1]:.3f}")
    print("OK" if ok else "FAIL")
    return ok


# --------------------------------------------------------------------------------------------
# --bench
# --------------------------------------------------------------------------------------------

BASE_CONFIG = {
    "vocab": 16, "width": 32, "heads": 1, "layers": 2, "mlp": True, "mlp_mult": 4,
    "activation": "gelu", "causal": True, "pos": "none", "max_len": 1024, "rope_base": 10000.0,
    "beta": 1.0, "tied": False, "final_norm": "auto", "embed_norm": "auto", "scheme": "pre",
    "norm": "rmsnorm", "mix_layers": 1, "block_size": 2, "norm_eps": 1e-5, "init_std": 0.02,
    "scaled_residual_init": True, "ngpt_alpha_init": 0.05, **OPTIONAL_CONFIG_FIELDS,
}

# name: (config overrides, batch B, length T, default measured steps)
PRESETS = {
    # The minimal model of 2510.08341: one layer, one head, attention only, D = V - 1.
    "minimal": (dict(vocab=16, width=15, layers=1, heads=1, mlp=False, pos="none",
                     scheme="post", norm="rmsnorm", causal=True, tied=False), 64, 16, 1000),
    "small": (dict(vocab=64, width=128, heads=4, layers=4, mlp=True, mlp_mult=4,
                   activation="gelu", pos="none", scheme="pre", norm="layernorm", causal=True,
                   tied=False), 32, 64, 30),
    # The depth study's model (experiments/depth_charlm_L16.toml), V = char_lm's vocabulary.
    "depth": (dict(vocab=114, width=64, heads=4, layers=16, mlp=True, mlp_mult=4,
                   activation="gelu", pos="rope", scheme="pre", norm="rmsnorm", causal=True,
                   tied=False), 16, 64, 20),
}


def use_one_thread() -> int:
    """Runs PyTorch on one thread: its intra-op pool and the BLAS it calls.

    torch.set_num_threads does not reach Debian's OpenBLAS (libopenblas0-pthread keeps its own
    pool, sized from OPENBLAS_NUM_THREADS or the core count): without the call below a
    "one-thread" matmul ran on both cores of the development machine. The BLAS is pinned
    through its own openblas_set_num_threads, found among the libraries this process has
    loaded. Returns the BLAS's thread count afterwards, 0 when no OpenBLAS is loaded."""
    torch.set_num_threads(1)
    try:
        with open("/proc/self/maps") as maps:
            paths = sorted({line.split()[-1] for line in maps if "openblas" in line})
    except OSError:  # not Linux: only torch's own pool is pinned
        return 0
    blas_threads = 0
    for path in paths:
        lib = ctypes.CDLL(path)
        if hasattr(lib, "openblas_set_num_threads"):
            lib.openblas_set_num_threads(1)
            blas_threads = max(blas_threads, lib.openblas_get_num_threads())
    return blas_threads


def bench(preset: str, steps: Optional[int], warmup: int, repeats: int, as_json: bool,
          dtype: torch.dtype, seed: int) -> None:
    blas_threads = use_one_thread()
    overrides, B, T, default_steps = PRESETS[preset]
    steps = steps or default_steps
    cfg = dict(BASE_CONFIG, **overrides)
    gen = torch.Generator().manual_seed(seed)
    model = Twin(cfg, dtype)
    model.init_random(gen)
    # normlab's AdamWConfig defaults: lr 1e-3, betas (0.9, 0.999), eps 1e-8, wd 0.01 on
    # matrices only, global-norm clip 1.0.
    opt = torch.optim.AdamW(model.param_groups(0.01), lr=1e-3, betas=(0.9, 0.999), eps=1e-8)
    params = list(model.parameters())
    V = cfg["vocab"]

    # Random tokens; the target at t is the token at t + 1, the last position unscored
    # (normlab's random_next_token_batch), i.e. ordinary next-token cross-entropy. Like
    # `normlab bench train`, 8 batches are drawn up front and cycled, so batch generation is
    # not timed.
    batches = [torch.randint(0, V, (B, T), generator=gen) for _ in range(8)]
    counter = [0]

    def step() -> float:
        tokens = batches[counter[0] % len(batches)]
        counter[0] += 1
        logits = model(tokens)
        loss = F.cross_entropy(logits[:, :-1].reshape(-1, V), tokens[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        if model.rs.unit_norm_weights:
            model.apply_weight_constraints()
        return float(loss)

    for _ in range(warmup):
        step()
    # `repeats` timed windows of `steps` steps each; the median window is reported (the
    # machine may be shared, and one window can be slowed by other processes).
    windows = []
    loss = 0.0
    load_before = os.getloadavg()[0]
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(steps):
            loss = step()
        windows.append(time.perf_counter() - start)
    elapsed = sorted(windows)[len(windows) // 2]
    result = {
        "twin": "pytorch-eager",
        "preset": preset,
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "blas_threads": blas_threads,
        "dtype": str(dtype).replace("torch.", ""),
        "batch": B,
        "seq_len": T,
        "params": sum(p.numel() for p in params),
        "warmup_steps": warmup,
        "steps": steps,
        "repeats": repeats,
        "seconds": elapsed,
        "window_steps_per_s": [steps / w for w in windows],
        "load_avg_1m": load_before,
        "steps_per_s": steps / elapsed,
        "tokens_per_s": steps * B * T / elapsed,
        "ms_per_step": 1e3 * elapsed / steps,
        "final_loss": loss,
        "config": cfg,
    }
    if as_json:
        print(json.dumps(result))
    else:
        print(f"twin bench {preset}: {cfg['scheme']} {cfg['norm']}, L={cfg['layers']} "
              f"D={cfg['width']} H={cfg['heads']} V={V} MLP={'on' if cfg['mlp'] else 'off'}, "
              f"B={B} T={T}, {result['params']} parameters, torch {torch.__version__}, "
              f"{torch.get_num_threads()} thread(s), BLAS {blas_threads}")
        print(f"  {repeats} windows of {steps} steps after {warmup} warmup, steps/s per window: "
              + ", ".join(f"{steps / w:.1f}" for w in windows)
              + f" (1-min load average {load_before:.2f} on {os.cpu_count()} cores)")
        print(f"  median window {elapsed:.3f} s: "
              f"{result['steps_per_s']:.1f} steps/s, {result['tokens_per_s']:.0f} tokens/s, "
              f"{result['ms_per_step']:.3f} ms/step, final loss {loss:.4f}")


# --------------------------------------------------------------------------------------------
# main
# --------------------------------------------------------------------------------------------


def bench_eval(ckpt_dir: str, tokens_file: str, repeats: int, dtype: torch.dtype) -> None:
    """Evaluation speed: the plain PyTorch forward (no_grad, one thread) of each sequence,
    one at a time, as a researcher's script would run it; the logits of the last position are
    printed so the caller can check both sides agree."""
    use_one_thread()
    model = load_model(ckpt_dir, dtype)
    tensors, _ = read_safetensors(tokens_file)
    if "tokens" not in tensors:
        raise TwinError(f"{tokens_file}: no tensor 'tokens'")
    tokens = torch.tensor(tensors["tokens"].astype(np.int64))
    if tokens.dim() == 2:
        tokens = tokens.unsqueeze(-1)
    times, last = [], []
    with torch.no_grad():
        for b in range(tokens.shape[0]):
            best = float("inf")
            for _ in range(repeats):
                t0 = time.perf_counter()
                logits = model(tokens[b:b + 1])
                best = min(best, time.perf_counter() - t0)
            times.append(best)
            last.append(logits[0, -1].tolist())
    print(json.dumps({"seconds_per_sequence": float(np.median(times)), "sequences": len(times),
                      "seq_len": int(tokens.shape[1]), "last_logits": last}))


def main(argv: List[str]) -> int:
    ap = argparse.ArgumentParser(
        prog="twin.py", description="The PyTorch twin of normlab's model (docs/twin.md).",
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__.split("Modes:")[1])
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", nargs="+", metavar="PATH",
                      help="CKPT_DIR GRADS_FILE pairs: compare with `normlab grads` output")
    mode.add_argument("--bench", choices=sorted(PRESETS), help="training-step benchmark preset")
    mode.add_argument("--eval", metavar="CKPT_DIR", help="print the logits of --tokens as JSON")
    mode.add_argument("--bench-eval", nargs=2, metavar=("CKPT_DIR", "TOKENS_FILE"),
                      help="time the forward pass on each sequence of TOKENS_FILE (safetensors "
                           "tensor 'tokens', (B, T, F)) and print the last position's logits")
    ap.add_argument("--double", action="store_true",
                    help="--bench, --eval: compute in float64 (default float32)")
    ap.add_argument("--steps", type=int, help="--bench: measured steps (default per preset)")
    ap.add_argument("--warmup", type=int, default=20, help="--bench: unmeasured steps first")
    ap.add_argument("--repeats", type=int, default=3,
                    help="--bench: timed windows of --steps steps; the median is reported")
    ap.add_argument("--seed", type=int, default=0, help="--bench: seed of init and batches")
    ap.add_argument("--json", action="store_true", help="--bench: print one JSON object")
    ap.add_argument("--tokens", help='--eval: token ids, e.g. "3 1 4 1 5"')
    args = ap.parse_args(argv)
    dtype = torch.float64 if args.double else torch.float32
    try:
        if args.check is not None:
            use_one_thread()  # small models; keeps parallel CTest jobs from contending
            if len(args.check) % 2 != 0:
                ap.error("--check takes CKPT_DIR GRADS_FILE pairs")
            if args.double:
                ap.error("--check computes in both precisions; --double is for --bench and --eval")
            pairs = list(zip(args.check[0::2], args.check[1::2]))
            results, broken = [], 0
            for ck, gr in pairs:
                try:
                    results.append(check_pair(ck, gr))
                except TwinError as e:  # this pair cannot be compared; go on with the others
                    print(f"== {ck} vs {gr}\n  error: {e}\nFAIL")
                    results.append(False)
                    broken += 1
            if len(pairs) > 1:
                print(f"{sum(results)}/{len(results)} pairs OK")
                print("OK" if all(results) else "FAIL")
            return 0 if all(results) else (2 if broken else 1)
        if args.bench is not None:
            if args.steps is not None and args.steps < 1:
                ap.error("--steps must be at least 1")
            if args.repeats < 1:
                ap.error("--repeats must be at least 1")
            bench(args.bench, args.steps, args.warmup, args.repeats, args.json, dtype, args.seed)
            return 0
        if args.bench_eval is not None:
            bench_eval(args.bench_eval[0], args.bench_eval[1], args.repeats, dtype)
            return 0
        if args.tokens is None:
            ap.error("--eval needs --tokens")
        ids = [int(t) for t in args.tokens.replace(",", " ").split()]
        model = load_model(args.eval, dtype)
        if not ids or min(ids) < 0 or max(ids) >= model.cfg["vocab"]:
            raise TwinError(f"tokens must be in [0, {model.cfg['vocab']}) and at least one")
        with torch.no_grad():
            logits = model(torch.tensor([ids], dtype=torch.int64))[0]
        print(json.dumps({"logits": logits.tolist()}))
        return 0
    except TwinError as e:
        print(f"twin.py: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
