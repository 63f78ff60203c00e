"""Records what TensorFlow 2.21 does with RewriterConfig.memory_optimization (issue 17, Grappler's
memory optimizer) for memory_models.swish_mlp: the loss and gradients with recomputation on
(RECOMPUTATION_HEURISTICS) and off (NO_MEM_OPT), and the nodes its plan recomputes (partition
graph nodes named Recomputed/..., with their data inputs and whether they wait on a control
input). Run under /opt/tfref only: /opt/tfref/bin/python tests/data/make_tf_memory_fixtures.py
"""
import json
import os

import tensorflow.compat.v1 as tf

from memory_models import swish_mlp  # beside this script; shared with the tests

tf.disable_eager_execution()
HERE = os.path.dirname(os.path.abspath(__file__))
MODES = {"on": 5, "off": 1}  # RewriterConfig.RECOMPUTATION_HEURISTICS, NO_MEM_OPT


def run(mode):
    with tf.Graph().as_default():
        x, loss, grads, feed = swish_mlp(tf)
        config = tf.ConfigProto()
        config.graph_options.rewrite_options.memory_optimization = mode
        md = tf.RunMetadata()
        with tf.Session(config=config) as sess:
            sess.run(tf.global_variables_initializer())
            values = sess.run([loss] + grads, feed, options=tf.RunOptions(output_partition_graphs=True),
                              run_metadata=md)
    recomputed = {n.name: {"op": n.op, "inputs": [i for i in n.input if not i.startswith("^")],
                           "waits": any(i.startswith("^") for i in n.input)}
                  for g in md.partition_graphs for n in g.node if n.name.startswith("Recomputed/")}
    return {"values": [v.tolist() for v in values], "recomputed": recomputed}


def main():
    result = {name: run(mode) for name, mode in MODES.items()}
    with open(os.path.join(HERE, "tf_memory_expected.json"), "w") as f:
        json.dump(result, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
