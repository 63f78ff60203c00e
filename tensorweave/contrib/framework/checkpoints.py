"""`tf.contrib.framework.assign_from_checkpoint_fn`: a callback that restores variables from a
checkpoint (e.g. to warm-start part of a model), optionally skipping the ones it lacks."""
from __future__ import annotations

import logging
from typing import Any, Callable, Optional

from tensorweave.training.checkpoint_utils import NewCheckpointReader
from tensorweave.training.saver import Saver

__all__ = ["assign_from_checkpoint_fn"]

_log = logging.getLogger("tensorweave")


def assign_from_checkpoint_fn(model_path: str, var_list: Any, ignore_missing_vars: bool = False,
                              reshape_variables: bool = False) -> Optional[Callable[[Any], None]]:
    """Returns fn(session) restoring `var_list` (a list of variables, or a dict checkpoint name
    -> variable) from the checkpoint `model_path`; with ignore_missing_vars the variables the
    checkpoint does not hold are skipped (and None is returned when none is left)."""
    if not var_list:
        raise ValueError("var_list cannot be empty")
    if ignore_missing_vars:
        reader = NewCheckpointReader(model_path)
        by_name = var_list if isinstance(var_list, dict) else {v.op.name: v for v in var_list}
        available = {}
        for name, var in by_name.items():
            if reader.has_tensor(name):
                available[name] = var
            else:
                _log.warning("Variable %s missing in checkpoint %s", name, model_path)
        var_list = available
    if not var_list:
        _log.warning("No Variables to restore")
        return None
    saver = Saver(var_list, reshape=reshape_variables)

    def callback(session: Any) -> None:
        saver.restore(session, model_path)
    return callback
