"""Random ops: stateful (Philox streams keyed by the graph and op seeds) and stateless."""
