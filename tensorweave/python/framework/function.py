"""`tensorflow.python.framework.function`: TF1's Defun, as programs import it."""
from tensorweave.ops.functional.defun import Defun

__all__ = ["Defun"]
