"""Forward hooks from Python (docs/python.md, "Hooks"): TransformerLens's `fwd_hooks`, a list of
(name, function) where name is a hook name or a predicate on names, and function(activation,
hook) may change the activation in place or return its replacement."""

import difflib
import inspect
from typing import Callable, List, Optional, Tuple

import numpy as np


class HookPoint:
    """What a hook function receives as `hook`, like TransformerLens's HookPoint: its name."""

    def __init__(self, name: str):
        self.name = name

    def layer(self) -> int:
        """The block of a "blocks.l. ..." name."""
        if not self.name.startswith("blocks."):
            raise ValueError(f"hook '{self.name}' is not inside a block")
        return int(self.name.split(".")[1])

    def __repr__(self) -> str:
        return f"HookPoint({self.name!r})"


def _caller(fn: Callable) -> Callable:
    """fn called as TransformerLens does, fn(activation, hook=point), or as fn(activation)
    when it takes one argument."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):  # a builtin without a signature: TransformerLens's call
        return lambda value, point: fn(value, hook=point)
    if any(p.name == "hook" or p.kind == p.VAR_KEYWORD for p in params):
        return lambda value, point: fn(value, hook=point)
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(positional) >= 2 or any(p.kind == p.VAR_POSITIONAL for p in params):
        return lambda value, point: fn(value, point)
    return lambda value, point: fn(value)


def parse(fwd_hooks) -> List[Tuple[Callable[[str], bool], Callable, Optional[str]]]:
    """fwd_hooks as (matches(name), call(activation, point), the name or None for a
    predicate), checked."""
    hooks = []
    for entry in fwd_hooks:
        if not (isinstance(entry, (tuple, list)) and len(entry) == 2 and callable(entry[1])):
            raise ValueError(f"fwd_hooks entry {entry!r}; allowed: (name or predicate on "
                             "names, function(activation, hook))")
        name, fn = entry
        if isinstance(name, str):
            hooks.append((lambda n, name=name: n == name, _caller(fn), name))
        elif callable(name):
            hooks.append((name, _caller(fn), None))
        else:
            raise ValueError(f"hook name {name!r}; allowed: a hook name or a predicate")
    return hooks


def check_names(hooks, offered) -> None:
    """ValueError for a hook name the forward never offered, with the nearest ones."""
    for _, _, name in hooks:
        if name is not None and name not in offered:
            near = difflib.get_close_matches(name, sorted(offered), n=3)
            raise ValueError(f"no hook point '{name}' in this model"
                             + (f"; nearest: {', '.join(near)}" if near else "")
                             + " (model.hook_names() lists them)")


class Dispatch:
    """The C++ model's view of fwd_hooks: which names it wants, and each offered activation
    (a float32 copy, with a batch axis) through every matching function in list order."""

    def __init__(self, fwd_hooks, batch_axis: bool = True):
        self.batch_axis = batch_axis
        self.hooks = parse(fwd_hooks)
        self.offered: List[str] = []  # every name the forward asked about, in order

    def wants(self, name: str) -> bool:
        self.offered.append(name)
        return any(match(name) for match, _, _ in self.hooks)

    def __call__(self, name: str, value: np.ndarray) -> np.ndarray:
        point = HookPoint(name)
        view = value if self.batch_axis else value[0]
        for match, call, _ in self.hooks:
            if not match(name):
                continue
            out = call(view, point)
            if out is not None:
                if hasattr(out, "detach"):  # a torch tensor
                    out = out.detach().cpu().numpy()
                out = np.asarray(out)
                if out.shape != view.shape:
                    raise ValueError(f"hook at '{name}' returned shape {list(out.shape)}; "
                                     f"allowed: the activation's {list(view.shape)}")
                view = out.astype(np.float32, copy=False)
        return view if self.batch_axis else view[None]

    def check_names(self) -> None:
        check_names(self.hooks, set(self.offered))
