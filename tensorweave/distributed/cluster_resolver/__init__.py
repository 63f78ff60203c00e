"""The cluster resolvers: where a task learns its cluster, its own job and index, and its master."""
from tensorweave.distributed.cluster_resolver.cluster_resolver import (  # noqa: F401
    ClusterResolver, SimpleClusterResolver, UnionResolver)
from tensorweave.distributed.cluster_resolver.slurm_cluster_resolver import SlurmClusterResolver  # noqa: F401
from tensorweave.distributed.cluster_resolver.tfconfig_cluster_resolver import TFConfigClusterResolver  # noqa: F401
