"""The transformations of tf.data.experimental built here (unbatch, shuffle_and_repeat,
map_and_batch): functions from a dataset to a dataset, for `Dataset.apply`, composed of
Dataset methods as TF 1.15 defines their results."""
from __future__ import annotations

from typing import Any, Callable, Optional

from tensorweave.data.dataset_ops import Dataset

__all__ = ["unbatch", "shuffle_and_repeat", "map_and_batch"]


def unbatch() -> Callable[[Dataset], Dataset]:
    return lambda dataset: dataset.unbatch()


def shuffle_and_repeat(buffer_size: Any, count: Any = None, seed: Optional[int] = None) -> Callable[[Dataset], Dataset]:
    return lambda dataset: dataset.shuffle(buffer_size, seed=seed).repeat(count)


def map_and_batch(map_func: Callable[..., Any], batch_size: Any, num_parallel_batches: Optional[int] = None,
                  drop_remainder: bool = False,
                  num_parallel_calls: Optional[int] = None) -> Callable[[Dataset], Dataset]:
    return lambda dataset: dataset.map(map_func, num_parallel_calls).batch(batch_size, drop_remainder)

