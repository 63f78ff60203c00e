"""`tf.compat`: the text helpers, and `tf.compat.v1`, which is this TF1 API itself
(`import tensorweave as tf; tf.compat.v1.placeholder(...)`), as TF 1.13+ programs write it.
(Re-exports; `v1` is looked up rather than imported because the package imports this module.)"""
import sys
from typing import Any

from tensorweave.framework.compat_strings import as_bytes, as_str, as_str_any, as_text  # noqa: F401


def __getattr__(name: str) -> Any:
    if name == "v1":
        return sys.modules[__package__]
    raise AttributeError(f"module 'tensorweave.compat' has no attribute {name!r}")
