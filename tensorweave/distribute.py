"""`tf.distribute`: so far only its cluster resolvers (re-exports only)."""
from tensorweave._api import distribute_cluster_resolver as cluster_resolver  # noqa: F401
from tensorweave._names.missing import module_getattr as _module_getattr

__getattr__ = _module_getattr("distribute", __name__)
