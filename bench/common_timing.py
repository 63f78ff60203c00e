"""The timing loop alone, importable by the TensorFlow subprocess without tensorweave."""
from common import time_per_step  # noqa: F401
