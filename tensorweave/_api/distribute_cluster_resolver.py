"""`tf.distribute.cluster_resolver` (re-exports only; they live in distributed/cluster_resolver/)."""
from tensorweave._names.missing import module_getattr as _module_getattr
from tensorweave.distributed.cluster_resolver import (  # noqa: F401
    ClusterResolver, SimpleClusterResolver, SlurmClusterResolver, TFConfigClusterResolver, UnionResolver)

__getattr__ = _module_getattr("distribute.cluster_resolver", "tensorweave.distribute.cluster_resolver")
