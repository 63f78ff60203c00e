"""Distributed TensorFlow (DESIGN.md "distributed/"): the cluster's description (ClusterSpec and
the ClusterDef/ServerDef protos) and the cluster resolvers that read it from cluster managers."""

import os as _os

# gRPC's core logs every closed connection at INFO on stderr (a stopped task's peers each print
# "Got goaway"); tasks start and stop routinely, so only its errors are shown unless the user
# asked for more. Set before grpc is first imported (rpc.py, security.py).
_os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
