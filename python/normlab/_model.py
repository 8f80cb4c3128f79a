"""normlab.Model: a float32 model of the C++ engine, built from options or a checkpoint."""

import json
import math
import os
from typing import Dict, List, Optional, Tuple

import numpy as np

from . import _hooks, _normlab


class Model:
    """One normlab model (docs/python.md). Build it with `normlab.init` or `normlab.load`."""

    def __init__(self, core: "_normlab.Model"):
        self._core = core

    @property
    def config(self) -> dict:
        """Every field of the model config (docs/checkpoint.md), as stored in checkpoints."""
        return json.loads(self._core.config_json)

    @property
    def label(self) -> str:
        """The scheme's display name, e.g. "block_attnres(4)"."""
        return self._core.label

    @property
    def num_params(self) -> int:
        return self._core.num_params

    def forward(self, tokens, mask=None) -> np.ndarray:
        """Logits (B, T, V) of integer tokens (B, T), or (T, V) for tokens (T,); the same
        values as `normlab forward`. Rows of different lengths: a list of sequences, or padded
        tokens with `mask` (B, T), true at each real token (padding after the tokens): each
        row's logits are those of the row run alone, bit for bit, zero at the padding."""
        batch = _ragged(tokens, mask)
        if batch is None:
            return self._core.forward(np.asarray(tokens))
        out = None
        for rows, length in batch.groups():
            logits = self._core.forward(batch.tokens[rows, :length])
            if out is None:
                out = np.zeros(batch.tokens.shape[:2] + logits.shape[2:], np.float32)
            out[rows, :length] = logits
        return out

    def run_with_hooks(self, tokens, fwd_hooks=(), mask=None) -> np.ndarray:
        """Logits of a forward in which each hook function sees its named activation and may
        change it (docs/python.md, "Hooks"). fwd_hooks: [(name, fn)], name a hook name
        (`hook_names()`) or a predicate on names; fn(activation, hook) receives a float32
        copy and changes it in place or returns the replacement; the forward continues from
        it. Ragged rows as in `forward`: each set of rows of one length runs alone, and its
        hooks see that set."""
        batch = _ragged(tokens, mask)
        if batch is None:
            tokens = np.asarray(tokens)
            dispatch = _hooks.Dispatch(fwd_hooks, batch_axis=tokens.ndim != 1)
            logits = self._core.run_with_hooks(tokens, dispatch)
            dispatch.check_names()
            return logits
        out = None
        for rows, length in batch.groups():
            dispatch = _hooks.Dispatch(fwd_hooks)
            logits = self._core.run_with_hooks(batch.tokens[rows, :length], dispatch)
            dispatch.check_names()
            if out is None:
                out = np.zeros(batch.tokens.shape[:2] + logits.shape[2:], np.float32)
            out[rows, :length] = logits
        return out

    def hook_names(self) -> List[str]:
        """Every hook name of this model, in the order the forward reaches them."""
        dispatch = _hooks.Dispatch([])
        self._core.run_with_hooks(np.zeros((1, 2), np.int64), dispatch)
        return list(dict.fromkeys(dispatch.offered))

    def run_with_cache(self, tokens, mask=None, names_filter=None
                       ) -> Tuple[np.ndarray, Dict[str, np.ndarray]]:
        """Logits and a dict of every hook point's activation (docs/python.md, "Hooks"), or of
        those whose name passes names_filter (a predicate, a name or a list of names). Ragged
        rows as in `forward`: every activation padded with zeros along its position axes."""
        if names_filter is None:
            wanted = lambda name: True
        elif callable(names_filter):
            wanted = names_filter
        else:
            names = {names_filter} if isinstance(names_filter, str) else set(names_filter)
            wanted = lambda name: name in names
        batch = _ragged(tokens, mask)
        if batch is None:
            cache = {}
            logits = self.run_with_hooks(tokens, [(wanted, _recorder(cache))])
            return logits, cache
        B, T = batch.tokens.shape[:2]
        logits, cache = None, {}
        for rows, length in batch.groups():
            part = {}
            part_logits = self.run_with_hooks(batch.tokens[rows, :length],
                                              [(wanted, _recorder(part))])
            if logits is None:
                logits = np.zeros((B, T) + part_logits.shape[2:], np.float32)
            logits[rows, :length] = part_logits
            for name, value in part.items():
                _place(cache, name, value, rows, length, (B, T))
        return logits, cache

    def grads(self, tokens, targets, weight=None, mask=None) -> Tuple[float, Dict[str, np.ndarray]]:
        """Loss and parameter gradients of the weighted soft-target cross-entropy, the loss of
        training. targets: int token ids shaped like tokens (-1 = unscored) or float
        distributions (B, T, V); weight: (B, T), default 1 at every scored position. Ragged
        rows as in `forward` (targets and weight padded alike): each set of rows of one length
        runs alone and their losses and gradients are combined with the weights of the
        definition, loss = sum(w * ce) / sum(w)."""
        batch = _ragged(tokens, mask)
        if batch is None:
            w = None if weight is None else np.asarray(weight, dtype=np.float32)
            return self._core.grads(np.asarray(tokens), np.asarray(targets), w)
        targets, w, total = _weights(batch, targets, weight)
        loss, grads = 0.0, {}
        for rows, length in batch.groups():
            share = w[rows, :length].sum() / total if total > 0 else 0.0
            part_loss, part = self._core.grads(batch.tokens[rows, :length],
                                               targets[rows, :length],
                                               w[rows, :length].astype(np.float32))
            loss += share * part_loss
            for name, g in part.items():
                grads[name] = grads.get(name, 0.0) + share * g.astype(np.float64)
        return loss, {name: g.astype(np.float32) for name, g in grads.items()}

    def backward_with_cache(self, tokens, targets, weight=None, mask=None
                            ) -> Tuple[float, Dict[str, np.ndarray]]:
        """Loss and its gradient with respect to every hook point's activation (docs/python.md,
        "Gradients"): {name: dL/d(activation)}, each shaped as the activation `run_with_cache`
        gives, for the loss of `grads` (same targets, weight and ragged rows). The final
        norm's gradients are zero at unscored positions, which do not reach it."""
        batch = _ragged(tokens, mask)
        if batch is None:
            w = None if weight is None else np.asarray(weight, dtype=np.float32)
            return self._core.backward_with_cache(np.asarray(tokens), np.asarray(targets), w)
        targets, w, total = _weights(batch, targets, weight)
        B, T = batch.tokens.shape[:2]
        loss, cache = 0.0, {}
        for rows, length in batch.groups():
            share = w[rows, :length].sum() / total if total > 0 else 0.0
            part_loss, part = self._core.backward_with_cache(
                batch.tokens[rows, :length], targets[rows, :length],
                w[rows, :length].astype(np.float32))
            loss += share * part_loss
            for name, g in part.items():
                _place(cache, name, share * g, rows, length, (B, T))
        return loss, cache

    def parameters(self) -> Dict[str, np.ndarray]:
        """Writable float32 views of the parameters by checkpoint name; writing to a view
        changes the model."""
        return self._core.parameters()

    def save(self, path: str) -> None:
        """Writes the checkpoint directory PATH (PATH/model.safetensors)."""
        self._core.save(os.fspath(path))

    def __repr__(self) -> str:
        c = self.config
        return (f"normlab.Model({self.label}, norm={c['norm']}, V={c['vocab']}, D={c['width']}, "
                f"L={c['layers']}, {self.num_params} parameters)")


def _weights(batch: "_Ragged", targets, weight):
    """Ragged rows' targets, their weights (B, T) (zero at padding and unscored positions) and
    the weights' sum, the loss's denominator."""
    targets = np.asarray(targets)
    soft = targets.dtype.kind == "f"
    scored = targets.sum(-1) > 0 if soft else targets >= 0
    w = scored.astype(np.float64) if weight is None else np.asarray(weight, np.float64)
    w = np.where(batch.mask & scored, w, 0.0)
    return targets, w, w.sum()


def _recorder(cache: Dict[str, np.ndarray]):
    """A hook function that keeps each activation in cache under its name."""
    def record(value, hook):
        cache[hook.name] = value.copy()
    return record


def _place(cache: Dict[str, np.ndarray], name: str, value: np.ndarray, rows, length: int,
           padded: Tuple[int, int]) -> None:
    """value, the activation at `name` of the given rows of one length, into cache[name]
    padded to (B, T) with zeros along its position axes (query and key of (B, H, T, T), else
    T of (B, T, ...))."""
    axes = (2, 3) if name.endswith(("hook_pattern", "hook_attn_scores")) else (1,)
    if name not in cache:
        shape = [padded[0]] + list(value.shape[1:])
        for a in axes:
            shape[a] = padded[1]
        cache[name] = np.zeros(shape, np.float32)
    index = [rows] + [slice(None)] * (value.ndim - 1)
    for a in axes:
        index[a] = slice(0, length)
    cache[name][tuple(index)] = value


class _Ragged:
    """Rows of different lengths: tokens padded to (B, T) and mask (B, T), real tokens first."""

    def __init__(self, tokens: np.ndarray, mask: np.ndarray):
        self.tokens, self.mask = tokens, mask
        self.lengths = mask.sum(1)

    def groups(self):
        """(rows, length) for each length, in increasing order."""
        for length in sorted(set(int(n) for n in self.lengths)):
            if length > 0:
                yield np.flatnonzero(self.lengths == length), length


def _ragged(tokens, mask) -> Optional[_Ragged]:
    """None for a plain batch; else the rows padded, with their mask checked."""
    if mask is None:
        if not isinstance(tokens, (list, tuple)) or not tokens:
            return None
        rows = [np.asarray(t) for t in tokens]
        if all(r.ndim == 0 for r in rows) or len({r.shape for r in rows}) == 1:
            return None  # one sequence, or rows of one length: a plain batch
        if any(r.ndim != 1 or r.dtype.kind not in "iu" for r in rows):
            raise ValueError("tokens: a list of integer sequences of different lengths; "
                             "allowed: 1-D integer arrays or lists")
        T = max(len(r) for r in rows)
        padded = np.zeros((len(rows), T), np.int64)
        mask = np.zeros((len(rows), T), bool)
        for i, r in enumerate(rows):
            padded[i, :len(r)] = r
            mask[i, :len(r)] = True
        return _Ragged(padded, mask)
    tokens = np.asarray(tokens)
    mask = np.asarray(mask).astype(bool)
    if tokens.ndim < 2 or mask.shape != tokens.shape[:2]:
        raise ValueError(f"mask: shape {list(mask.shape)}; allowed: the tokens' (B, T) = "
                         f"{list(tokens.shape[:2])}")
    lengths = mask.sum(1)
    if not (mask == (np.arange(mask.shape[1]) < lengths[:, None])).all():
        raise ValueError("mask: padding must come after each row's tokens (true, then false)")
    return _Ragged(tokens, mask)


def init(scheme: str = "pre", norm: Optional[str] = None, seed: int = 0, **model_options) -> Model:
    """A freshly initialized model, like `normlab init`. model_options are config fields
    (docs/checkpoint.md): vocab, width, heads, layers, mlp, mlp_mult, activation, causal, pos,
    max_len, rope_base, beta, tied, final_norm, embed_norm, mix_layers, block_size, norm_eps,
    init_std, weight_init ("normal" or "truncated_fan_in"), embed_init_std,
    scaled_residual_init, ngpt_alpha_init, attn_norms, mlp_norms, placement (the
    placement language of docs/schemes.md), qk_norm ("none", "l2" or "rmsnorm"), streams and
    sinkhorn (hyper_connections: n streams, mHC). `norm`
    defaults to
    the scheme's (l2 for ngpt, rmsnorm otherwise); final_norm and embed_norm take True, False or
    "auto"."""
    if scheme not in _normlab.scheme_names():
        raise ValueError(f"scheme: '{scheme}'; allowed: {', '.join(_normlab.scheme_names())}")
    config = json.loads(_normlab.default_config_json(scheme))
    if norm is not None:
        config["norm"] = norm
    fields = [name for name, _, _ in _normlab.model_config_fields()]
    for key, value in model_options.items():
        if key not in fields or key in ("scheme", "norm"):
            allowed = sorted(k for k in fields if k not in ("scheme", "norm"))
            raise ValueError(f"unknown model option '{key}'; allowed: {', '.join(allowed)}")
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"{key}: {value}; allowed: a finite number")
        if key in ("final_norm", "embed_norm") and isinstance(value, bool):
            value = "on" if value else "off"
        config[key] = value
    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2**64:
        raise ValueError(f"seed: {seed!r}; allowed: an integer from 0 to {2**64 - 1}")
    return Model(_normlab.Model.from_config(json.dumps(config), seed))


def load(path) -> Model:
    """The model of a checkpoint directory, or of one weight file (a run's
    final/bema.safetensors, final/ema.safetensors, a checkpoint's model.safetensors)."""
    return Model(_normlab.Model.load(os.fspath(path)))
