"""Runs the candidate sampler cases of sampler_cases.py under TensorFlow 2.21 (TF1 graph mode)
and writes TF's sampled candidates and expected counts for each run to
tf_samplers_expected.json. Run under /opt/tfref only:
    /opt/tfref/bin/python tests/data/make_tf_samplers_fixtures.py
"""
import json
import os
import sys
import tempfile

import tensorflow.compat.v1 as tf

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sampler_cases import CASES, TRUE  # noqa: E402

tf.disable_eager_execution()

OPS = {"uniform": tf.nn.uniform_candidate_sampler, "fixed": tf.nn.fixed_unigram_candidate_sampler,
       "learned": tf.nn.learned_unigram_candidate_sampler}


def run_case(case, tmp):
    kw = dict(case["kw"])
    if "vocab" in case:
        path = os.path.join(tmp, "vocab.txt")
        with open(path, "w") as f:
            f.write("\n".join(case["vocab"]) + "\n")
        kw["vocab_file"] = path
    with tf.Graph().as_default():
        tf.set_random_seed(7)
        out = OPS[case["op"]](tf.constant(TRUE, tf.int64), seed=11, **kw)
        runs = []
        with tf.Session() as sess:
            for _ in range(case["runs"]):
                sampled, true_count, sampled_count = sess.run(out)
                runs.append({"sampled": sampled.tolist(), "true_expected_count": true_count.tolist(),
                             "sampled_expected_count": sampled_count.tolist()})
        return runs


def main():
    out = {"tf_version": tf.__version__, "true_classes": TRUE, "cases": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for name, case in CASES.items():
            out["cases"][name] = dict(case, results=run_case(case, tmp))
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tf_samplers_expected.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1)
    print("wrote", path)


if __name__ == "__main__":
    main()
