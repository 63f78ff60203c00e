"""Candidate sampler cases shared by make_tf_samplers_fixtures.py (which runs them under
TensorFlow) and tests/ops/random/test_range_samplers.py (which replays them under tensorweave).

Each case is one sampler op with a graph seed and an op seed, run `runs` times in one session on
`true_classes`; a vocabulary file's lines are given as `vocab` (written to a temporary file)."""

TRUE = [[0, 3], [5, 3], [9, 1]]

CASES = {
    "uniform": dict(op="uniform", kw=dict(num_true=2, num_sampled=6, unique=False, range_max=20), runs=3),
    "uniform_unique": dict(op="uniform", kw=dict(num_true=2, num_sampled=8, unique=True, range_max=10), runs=3),
    "fixed_unigrams": dict(op="fixed", kw=dict(num_true=2, num_sampled=7, unique=False, range_max=10,
                                               unigrams=[5, 1, 1, 2, 8, 0.5, 3, 1, 1, 4]), runs=3),
    "fixed_unique_distorted": dict(op="fixed", kw=dict(num_true=2, num_sampled=6, unique=True, range_max=10,
                                                       unigrams=[5, 1, 1, 2, 8, 0.5, 3, 1, 1, 4],
                                                       distortion=0.75), runs=3),
    "fixed_reserved": dict(op="fixed", kw=dict(num_true=2, num_sampled=5, unique=False, range_max=10,
                                               unigrams=[3, 1, 4, 1, 5, 9, 2, 6], num_reserved_ids=2), runs=2),
    "fixed_vocab_shard": dict(op="fixed", kw=dict(num_true=2, num_sampled=5, unique=True, range_max=10,
                                                  num_reserved_ids=3, num_shards=2, shard=1, distortion=0.5),
                              vocab=["w%d,%d" % (i, 1 + (i * 7) % 11) for i in range(17)], runs=2),
    "fixed_vocab": dict(op="fixed", kw=dict(num_true=2, num_sampled=9, unique=False, range_max=12),
                        vocab=["the,40", "of,21.5", "a,12", "cat,3", "sat,2", "on,9", "mat,1", "dog,4", "x,y,6",
                               "ran,2", "far,1.25", "away,7"], runs=2),
    "learned": dict(op="learned", kw=dict(num_true=2, num_sampled=6, unique=False, range_max=12), runs=4),
    "learned_unique": dict(op="learned", kw=dict(num_true=2, num_sampled=5, unique=True, range_max=10), runs=4),
}
