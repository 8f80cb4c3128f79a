"""normlab.to_torch: a normlab model as a torch.nn.Module (the twin, docs/twin.md)."""

import json
import os


def to_torch(model_or_path, dtype=None):
    """A torch.nn.Module computing the same logits as normlab (within float32 rounding): the
    PyTorch twin, an independent re-implementation, loaded with the model's parameters. Its
    state_dict() keys are the checkpoint's tensor names (docs/checkpoint.md). Call it on integer
    tokens (B, T) (or (B, T, F)), int32 or int64, a tensor or a numpy array, for logits
    (B, T, V). dtype: torch.float32 (default) or
    torch.float64. Needs Debian's python3-torch; ValueError for a config the twin cannot
    build."""
    import torch

    from . import twin
    from ._model import Model, load

    model = model_or_path if isinstance(model_or_path, Model) else load(os.fspath(model_or_path))
    try:
        cfg = twin.parse_config({"normlab_config": json.dumps(model.config)}, "model")
        module = twin.Twin(cfg, dtype or torch.float32)
        module.load(model.parameters(), "model")
    except twin.TwinError as e:
        raise ValueError(str(e)) from None
    module.normlab_config = model.config  # for from_torch
    return module


def from_torch(module):
    """The normlab model of a module made by `to_torch` (its config and its current
    parameters, e.g. after training it in PyTorch): each float32 tensor is copied bit for bit;
    a float64 module's tensors are rounded to float32."""
    import numpy as np

    from . import _normlab
    from ._model import Model

    config = getattr(module, "normlab_config", None)
    if not isinstance(config, dict):
        raise ValueError(f"a {type(module).__name__}; allowed: a module made by normlab.to_torch")
    model = Model(_normlab.Model.from_config(json.dumps(config), 0))
    params = model.parameters()
    tensors = {name: t.detach().cpu() for name, t in module.state_dict().items()}
    missing, extra = sorted(set(params) - set(tensors)), sorted(set(tensors) - set(params))
    if missing or extra:
        raise ValueError(f"the module's tensors differ from its config's: missing {missing}, "
                         f"extra {extra}")
    for name, view in params.items():
        value = tensors[name].numpy()
        if value.shape != view.shape:
            raise ValueError(f"tensor '{name}' has shape {list(value.shape)}, the config needs "
                             f"{list(view.shape)}")
        view[...] = value.astype(np.float32)
    return model
