"""normlab.to_torch: a normlab model as a torch.nn.Module (the twin, docs/twin.md)."""

import json
import os


def to_torch(model_or_path, dtype=None):
    """A torch.nn.Module computing the same logits as normlab (within float32 rounding): the
    PyTorch twin, an independent re-implementation, loaded with the model's parameters. Its
    state_dict() keys are the checkpoint's tensor names (docs/checkpoint.md). Call it on int64
    tokens (B, T) (or (B, T, F)) for logits (B, T, V). dtype: torch.float32 (default) or
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
    return module
