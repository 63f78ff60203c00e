"""Op cases for random ops. Stateful draws are seeded (global and op seed): TF draws the same
first numbers in graph mode and eagerly, and so must tensorweave. Stateless ops are functions of
their seed."""

import tensorweave as tf
from tests.op_cases import SEEDED, OpCase, raw


def _draws():
    return [tf.random_uniform([2, 3], seed=1), tf.random_uniform([4], minval=-3, maxval=9, dtype=tf.int32, seed=2),
            tf.random_normal([3], seed=3), tf.truncated_normal([2, 2], seed=4),
            tf.random_shuffle(tf.range(6), seed=5), tf.multinomial(tf.constant([[0.0, 1.0, 2.0]]), 4, seed=6)]


def _stateless():
    seed = tf.constant([7, 11], tf.int64)
    key, counter = raw("StatelessRandomGetKeyCounter", seed)
    alg = tf.constant(1, tf.int32)
    shape = tf.constant([2, 3])
    return [tf.random.stateless_uniform([2, 3], seed), tf.random.stateless_normal([3], seed),
            tf.random.stateless_truncated_normal([2, 2], seed),
            tf.random.stateless_uniform([4], seed, minval=-5, maxval=5, dtype=tf.int32),
            tf.random.stateless_uniform([3], seed, minval=None, maxval=None, dtype=tf.int64),
            tf.random.stateless_categorical(tf.constant([[0.0, 1.0, 2.0]]), 5, seed),
            key, counter,
            raw("StatelessRandomUniformV2", shape, key, counter, alg),
            raw("StatelessRandomNormalV2", shape, key, counter, alg),
            raw("StatelessTruncatedNormalV2", shape, key, counter, alg)]


def _candidate_samplers():
    true = tf.constant([[1, 2], [0, 5]], tf.int64)
    out = []
    for sampler, extra in ((tf.nn.uniform_candidate_sampler, {}), (tf.nn.log_uniform_candidate_sampler, {}),
                           (tf.nn.learned_unigram_candidate_sampler, {}),
                           (tf.nn.fixed_unigram_candidate_sampler, {"unigrams": [1.0, 2, 3, 4, 5, 6, 7, 8]})):
        out.extend(sampler(true, 2, 4, True, 8, seed=3, **extra))
    out.extend(tf.nn.all_candidate_sampler(true, 2, 8, True, seed=3))
    sampled = tf.constant([1, 3, 5], tf.int64)
    out.extend(tf.nn.compute_accidental_hits(true, sampled, 2, seed=3))
    return out


def _sample_distorted_bounding_box():
    boxes = tf.constant([[[0.1, 0.1, 0.9, 0.8]]])
    first = tf.image.sample_distorted_bounding_box([40, 30, 3], boxes, seed=1, seed2=2, min_object_covered=0.2)
    second = tf.image.sample_distorted_bounding_box([40, 30, 3], boxes, seed=3, seed2=4,
                                                    min_object_covered=tf.constant(0.3))
    v1 = raw("SampleDistortedBoundingBox", tf.constant([40, 30, 3]), boxes, seed=5, seed2=6, min_object_covered=0.2)
    return list(first) + list(second) + list(v1)


CASES = [
    OpCase("random:draws", _draws, compare=SEEDED,
           ops=("RandomUniform", "RandomUniformInt", "RandomStandardNormal", "TruncatedNormal", "RandomShuffle",
                "Multinomial")),
    OpCase("random:stateless", _stateless,
           ops=("StatelessRandomGetKeyCounter", "StatelessRandomUniformV2", "StatelessRandomNormalV2",
                "StatelessTruncatedNormalV2", "StatelessRandomUniformIntV2", "StatelessRandomUniformFullIntV2",
                "StatelessMultinomial")),
    OpCase("random:candidate_samplers", _candidate_samplers, compare=SEEDED,
           ops=("UniformCandidateSampler", "LogUniformCandidateSampler", "LearnedUnigramCandidateSampler",
                "FixedUnigramCandidateSampler", "AllCandidateSampler", "ComputeAccidentalHits")),
    OpCase("random:sample_distorted_bounding_box", _sample_distorted_bounding_box, compare=SEEDED,
           ops=("SampleDistortedBoundingBox", "SampleDistortedBoundingBoxV2")),
]
