"""`tf.contrib.training`: the greedy load-balancing ps strategy for
tf.train.replica_device_setter (re-exports only)."""
from tensorweave.contrib.training.device_setter import (  # noqa: F401
    GreedyLoadBalancingStrategy, byte_size_load_fn)
from tensorweave.contrib._unprovided import unprovided_getattr

__getattr__ = unprovided_getattr("tf.contrib.training")
