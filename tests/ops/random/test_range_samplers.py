"""Uniform, fixed-unigram (unigrams or a vocabulary file; distortion, reserved ids, shards) and
learned-unigram candidate samplers: with the same seeds the sampled candidates and expected
counts equal TensorFlow's (tests/data/tf_samplers_expected.json, written by
make_tf_samplers_fixtures.py from the cases in sampler_cases.py), run after run; TF's errors;
static shapes."""
import json
import os

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import errors

_DATA = os.path.join(os.path.dirname(__file__), "..", "..", "data")
with open(os.path.join(_DATA, "tf_samplers_expected.json")) as _f:
    _FIXTURE = json.load(_f)

OPS = {"uniform": tf.nn.uniform_candidate_sampler, "fixed": tf.nn.fixed_unigram_candidate_sampler,
       "learned": tf.nn.learned_unigram_candidate_sampler}


@pytest.mark.parametrize("name", sorted(_FIXTURE["cases"]))
def test_sampler_matches_tensorflow(name, tmp_path):
    case = _FIXTURE["cases"][name]
    kw = dict(case["kw"])
    if "vocab" in case:
        path = tmp_path / "vocab.txt"
        path.write_text("\n".join(case["vocab"]) + "\n")
        kw["vocab_file"] = str(path)
    with tf.Graph().as_default():
        tf.set_random_seed(7)
        out = OPS[case["op"]](tf.constant(_FIXTURE["true_classes"], tf.int64), seed=11, **kw)
        assert out[0].shape.as_list() == [kw["num_sampled"]]
        assert out[1].shape.as_list() == [3, 2] and out[2].shape.as_list() == [kw["num_sampled"]]
        with tf.Session() as sess:
            for want in case["results"]:
                sampled, true_count, sampled_count = sess.run(out)
                np.testing.assert_array_equal(sampled, want["sampled"])
                assert true_count.dtype == np.float32 and sampled_count.dtype == np.float32
                np.testing.assert_allclose(true_count, want["true_expected_count"], rtol=1e-5)
                np.testing.assert_allclose(sampled_count, want["sampled_expected_count"], rtol=1e-5)


def test_learned_unigram_follows_the_true_classes_seen():
    """Its distribution is the counts of the true classes so far (all 1 at first)."""
    with tf.Graph().as_default():
        true = tf.placeholder(tf.int64, [None, 1])
        sampled, true_count, _ = tf.nn.learned_unigram_candidate_sampler(true, 1, 4000, False, 4, seed=3)
        with tf.Session() as sess:
            _, first_count, = sess.run([sampled, true_count], {true: [[2]] * 96})
            np.testing.assert_allclose(first_count, 4000 / 4)  # before the update: uniform
            values = sess.run(sampled, {true: [[2]]})
        frequency = np.bincount(values, minlength=4) / values.size  # counts now 1, 1, 97, 1
        np.testing.assert_allclose(frequency, np.array([1, 1, 97, 1]) / 100, atol=0.02)


def test_fixed_unigram_errors(tmp_path):
    true = tf.constant([[1]], tf.int64)
    cases = [
        (dict(range_max=3), "Must provide either vocab_file or unigrams."),
        (dict(range_max=3, unigrams=[1.0, 2.0, 3.0], vocab_file=str(tmp_path / "v")),
         "Must only provide one of vocab_file and unigrams."),
        (dict(range_max=4, unigrams=[1.0, 2.0, 3.0]), "range is 4 must be equal to weights size  3"),
    ]
    bad = tmp_path / "bad.txt"
    bad.write_text("a,1\nb,two\n")
    cases.append((dict(range_max=2, vocab_file=str(bad)), "Wrong vocabulary format at line: b,two"))
    for kw, message in cases:
        with tf.Graph().as_default():
            out = tf.nn.fixed_unigram_candidate_sampler(tf.constant([[1]], tf.int64), 1, 2, False, **kw)
            with tf.Session() as sess:
                with pytest.raises(errors.InvalidArgumentError, match=message):
                    sess.run(out)
    del true
    with tf.Graph().as_default():
        out = tf.nn.learned_unigram_candidate_sampler(tf.constant([[5]], tf.int64), 1, 2, True, 3)
        with tf.Session() as sess:
            with pytest.raises(errors.InvalidArgumentError, match=r"`true_candidate` out of range \[0, 3\)"):
                sess.run(out)
