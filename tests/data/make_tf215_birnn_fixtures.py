"""Writes tests/data/tf215_birnn_expected.json: what TensorFlow 2.15 (tf.compat.v1, graph mode)
computes for sparse_nn_cases.TF215_VALUES (tf.nn.static_bidirectional_rnn with a BasicLSTMCell
forward and a GRUCell backward, seeded initializers; TF 2.21 no longer has these cells). The
recording is make_tf_sparse_nn_fixtures.py's.

Run with real TensorFlow, never imported by the tests:
`/opt/tf215/bin/python tests/data/make_tf215_birnn_fixtures.py tests/data`.
"""
import os
import sys

import make_tf_sparse_nn_fixtures as recorder  # beside this script
import sparse_nn_cases

if __name__ == "__main__":
    recorder.main(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__)),
                  cases=sparse_nn_cases.TF215_VALUES, errors_cases={}, file_name="tf215_birnn_expected.json")
