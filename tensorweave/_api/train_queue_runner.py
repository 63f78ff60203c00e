"""`tf.train.queue_runner`: the queue-runner names under their TF1 sub-namespace (re-exports only)."""
from tensorweave._names.missing import module_getattr as _module_getattr
from tensorweave.training.queue_runner import QueueRunner, add_queue_runner, start_queue_runners  # noqa: F401

__getattr__ = _module_getattr("train.queue_runner", "tensorweave.train.queue_runner")
