"""Shared by the JIT tests: the walkthrough's two examples, and running a step with step stats."""
import math

import numpy as np

import tensorweave as tf

SQRT_2_OVER_PI = math.sqrt(2 / math.pi)


def x4(x):
    return x * x * x * x


def gelu(x):
    """The walkthrough's hand-written GELU."""
    return 0.5 * x * (1.0 + tf.tanh(SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)))


def gelu_numpy(x):
    x = x.astype(np.float64)
    return 0.5 * x * (1 + np.tanh(SQRT_2_OVER_PI * (x + 0.044715 * x ** 3)))


def jit_config(level=None):
    config = tf.ConfigProto()
    if level is not None:
        config.graph_options.optimizer_options.global_jit_level = level
    return config


def run_traced(fetches, feed_dict=None, config=None, graph=None):
    """(values, labels of the step's nodes, types of the fused nodes' ops)."""
    graph = graph or tf.get_default_graph()
    with tf.Session(graph=graph, config=config or tf.ConfigProto()) as sess:
        md = tf.RunMetadata()
        values = sess.run(fetches, feed_dict, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                          run_metadata=md)
    labels = [n.timeline_label for d in md.step_stats.dev_stats for n in d.node_stats]
    return values, labels


def fused(labels):
    """The labels of the step's _XlaRun nodes."""
    return [label for label in labels if " = _XlaRun(" in label]


def unfused(build, feeds):
    """`build()`'s values in a graph of its own with no jit marks (the reference)."""
    with tf.Graph().as_default() as g:
        fetches, placeholders = build()
        with tf.Session(graph=g) as sess:
            return sess.run(fetches, dict(zip(placeholders, feeds)))
