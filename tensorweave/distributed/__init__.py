"""Distributed TensorFlow (DESIGN.md "distributed/"): the cluster's description (ClusterSpec and
the ClusterDef/ServerDef protos) and the cluster resolvers that read it from cluster managers."""
