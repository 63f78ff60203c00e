"""Shared by the grappler tests: run the passes on a pruned graph, list what they give."""
import os

import tensorweave as tf
from tensorweave.grappler import meta_optimizer
from tensorweave.grappler.settings import ALL_ON, Settings
from tensorweave.runtime import pruning

PASSES = ("common_subgraph_elimination", "constant_folding", "arithmetic_optimization", "remapping",
          "dependency_optimization", "loop_optimization", "shape_optimization", "layout_optimizer")
ONLY = {name: Settings(**{n: n == name for n in PASSES}, min_graph_nodes=-1, fail_on_errors=True)
        for name in PASSES}


def optimize(fetches, feeds=(), targets=(), settings=ALL_ON, devices=None):
    """(ops, fetches) after the passes; the inputs themselves when nothing changed."""
    feeds = list(feeds)
    ops = pruning.prune(fetches, targets, set(feeds))
    if devices is None:
        with tf.Session(graph=ops[0].graph) as sess:
            devices = sess._device_mgr.devices
    result = meta_optimizer.run_passes(ops, list(fetches), list(targets), feeds, settings, devices)
    return (ops, list(fetches)) if result is None else result


def types(ops):
    return sorted(op.type for op in ops)


def by_name(ops):
    return {op.name: op for op in ops}


def off_config():
    """Every pass off: Grappler disabled and the classic optimizer at L0."""
    config = tf.ConfigProto()
    config.graph_options.rewrite_options.disable_meta_optimizer = True
    config.graph_options.optimizer_options.opt_level = tf.OptimizerOptions.L0
    return config


def on_config():
    config = tf.ConfigProto()
    config.graph_options.rewrite_options.min_graph_nodes = -1
    return config


class GrapplerEnv:
    """Sets TW_GRAPPLER for a block (the test mode that forces every pass on or off)."""

    def __init__(self, mode):
        self.mode = mode

    def __enter__(self):
        self.old = os.environ.get("TW_GRAPPLER")
        os.environ["TW_GRAPPLER"] = self.mode

    def __exit__(self, *exc):
        if self.old is None:
            os.environ.pop("TW_GRAPPLER", None)
        else:
            os.environ["TW_GRAPPLER"] = self.old
