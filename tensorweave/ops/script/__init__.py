"""`tf.py_func`: Python functions as graph nodes (py_func)."""
from tensorweave.ops.script.py_func import py_func

__all__ = ["py_func"]
