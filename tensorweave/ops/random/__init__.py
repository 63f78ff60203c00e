"""Random ops: stateful (Philox streams keyed by the graph and op seeds: random_ops) and stateless
(stateless), and the wrappers that scale and shift their draws with math ops (draws, tier 2).

The family's public names (TF's random_ops and stateless_random_ops namespaces) are re-exported
here."""
from tensorweave.ops.random.draws import (
    random_normal, random_uniform, stateless_random_normal, stateless_random_uniform,
    stateless_truncated_normal, truncated_normal)
from tensorweave.ops.random.random_ops import multinomial, random_shuffle
from tensorweave.ops.random.candidate_sampling import compute_accidental_hits, log_uniform_candidate_sampler
from tensorweave.ops.random.stateless import stateless_categorical, stateless_multinomial

__all__ = ["random_uniform", "random_normal", "truncated_normal", "multinomial", "random_shuffle",
           "stateless_random_uniform", "stateless_random_normal", "stateless_truncated_normal",
           "stateless_multinomial", "stateless_categorical", "log_uniform_candidate_sampler",
           "compute_accidental_hits"]
from tensorweave.ops.random.range_samplers import (  # noqa: E402
    all_candidate_sampler, fixed_unigram_candidate_sampler, learned_unigram_candidate_sampler,
    uniform_candidate_sampler)

__all__ += ["uniform_candidate_sampler", "fixed_unigram_candidate_sampler", "learned_unigram_candidate_sampler",
            "all_candidate_sampler"]
