"""`tf.random_uniform`, `tf.random_normal`, `tf.truncated_normal` and their stateless forms:
the raw draws of random/random_ops.py and random/stateless.py scaled and shifted with math ops,
built op for op as TF builds them (so later ops get TF's derived seeds and names)."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import graph as _graph
from tensorweave.framework import random_seed
from tensorweave.framework.op_def import OpDef
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape, dimension_value
# elementwise also installs the Tensor operators (`rnd * stddev`) used here
from tensorweave.ops.math.elementwise import add, multiply
from tensorweave.ops.random.random_ops import (
    RandomStandardNormal, RandomUniform, RandomUniformInt, TruncatedNormal)
from tensorweave.ops.random.stateless import (
    StatelessRandomNormalV2, StatelessRandomUniformFullIntV2, StatelessRandomUniformIntV2,
    StatelessRandomUniformV2, StatelessTruncatedNormalV2, key_counter_alg)

__all__ = ["random_uniform", "random_normal", "truncated_normal", "stateless_random_uniform",
           "stateless_random_normal", "stateless_truncated_normal"]


def _shape_tensor(shape: Any) -> Any:
    """TF's tensor_util.shape_tensor: a shape given as list/tuple/TensorShape/tensor -> int tensor."""
    if isinstance(shape, TensorShape):
        if not shape.is_fully_defined():
            raise ValueError(f"Cannot convert a partially known TensorShape {shape} to a Tensor.")
        shape = shape.as_list()
    if isinstance(shape, (tuple, list)):
        # An empty list would convert as float32; TF makes it an int32 shape.
        shape = [dimension_value(d) for d in shape] if shape else np.zeros([0], np.int32)
    return convert_to_tensor(shape, name="shape")


def _float_dtype(dtype: Any, allow_int: bool = False) -> _dtypes.DType:
    dtype = _dtypes.as_dtype(dtype).base_dtype
    allowed = (_dtypes.float16, _dtypes.float32, _dtypes.float64) + (
        (_dtypes.int32, _dtypes.int64) if allow_int else ())
    if dtype not in allowed:
        raise ValueError(f"Invalid dtype {dtype!r}")
    return dtype


def random_uniform(shape: Any, minval: Any = 0, maxval: Any = None, dtype: Any = _dtypes.float32,
                   seed: Optional[int] = None, name: Optional[str] = None) -> Any:
    """Uniform values in [minval, maxval): floats scale RandomUniform, ints use RandomUniformInt.
    Built op for op as TF builds it (the default [0, 1) is the bare RandomUniform, a Python 0
    minval only multiplies), so later ops get the same derived seeds as in TF."""
    dtype = _float_dtype(dtype, allow_int=True)
    if maxval is None:
        if dtype.is_integer:
            raise ValueError(f"Must specify maxval for integer dtype {dtype!r}")
        maxval = 1
    with _graph.name_scope(name, "random_uniform", [shape, minval, maxval]) as scope:
        shape = _shape_tensor(shape)
        minval_is_zero = isinstance(minval, int) and minval == 0  # Python ints only, as TF
        maxval_is_one = isinstance(maxval, int) and maxval == 1
        if not minval_is_zero or not maxval_is_one or dtype.is_integer:
            minval = convert_to_tensor(minval, dtype=dtype, name="min")
            maxval = convert_to_tensor(maxval, dtype=dtype, name="max")
        seed1, seed2 = random_seed.get_seed(seed)
        if dtype.is_integer:
            return apply_op(RandomUniformInt, name=scope, shape=shape, minval=minval, maxval=maxval,
                            seed=seed1, seed2=seed2)
        rnd = apply_op(RandomUniform, shape=shape, dtype=dtype, seed=seed1, seed2=seed2)
        if minval_is_zero:
            return rnd if maxval_is_one else multiply(rnd, maxval)
        return add(rnd * (maxval - minval), minval, name=scope)


def _scaled_normal(op_def: OpDef, default_name: str, shape: Any, mean: Any, stddev: Any, dtype: Any,
                   seed: Optional[int], name: Optional[str]) -> Any:
    """mean + stddev * op_def(shape), built as TF builds random_normal/truncated_normal."""
    dtype = _dtypes.as_dtype(dtype).base_dtype
    with _graph.name_scope(name, default_name, [shape, mean, stddev]) as scope:
        shape = _shape_tensor(shape)
        mean = convert_to_tensor(mean, dtype=dtype, name="mean")
        stddev = convert_to_tensor(stddev, dtype=dtype, name="stddev")
        seed1, seed2 = random_seed.get_seed(seed)
        rnd = apply_op(op_def, shape=shape, dtype=dtype, seed=seed1, seed2=seed2)
        return add(rnd * stddev, mean, name=scope)


def random_normal(shape: Any, mean: Any = 0.0, stddev: Any = 1.0, dtype: Any = _dtypes.float32,
                  seed: Optional[int] = None, name: Optional[str] = None) -> Any:
    """Normally distributed values: mean + stddev * RandomStandardNormal(shape)."""
    return _scaled_normal(RandomStandardNormal, "random_normal", shape, mean, stddev, dtype, seed, name)


def truncated_normal(shape: Any, mean: Any = 0.0, stddev: Any = 1.0, dtype: Any = _dtypes.float32,
                     seed: Optional[int] = None, name: Optional[str] = None) -> Any:
    """Normal values re-drawn when more than 2 standard deviations from the mean."""
    return _scaled_normal(TruncatedNormal, "truncated_normal", shape, mean, stddev, dtype, seed, name)


def stateless_random_uniform(shape: Any, seed: Any, minval: Any = 0, maxval: Any = None,
                             dtype: Any = _dtypes.float32, name: Optional[str] = None,
                             alg: Any = "auto_select") -> Any:
    """tf.random.stateless_uniform: uniform values in [minval, maxval) fixed by `seed` ([2]
    ints); integer dtypes with minval = maxval = None cover the dtype's whole range."""
    dtype = _dtypes.as_dtype(dtype).base_dtype
    if dtype.is_integer and (minval is None) != (maxval is None):
        raise ValueError(f"For integer `dtype` argument {dtype}, argument `minval` and `maxval` must be "
                         f"both None or not None. Got `minval`={minval} and `maxval`={maxval}.")
    if not dtype.is_integer and maxval is None:
        maxval = 1
    with _graph.name_scope(name, "stateless_random_uniform", [shape, seed, minval, maxval]) as scope:
        shape = _shape_tensor(shape)
        if dtype.is_integer and minval is None:
            key, counter, alg = key_counter_alg(seed, alg)
            return apply_op(StatelessRandomUniformFullIntV2, name=scope, shape=shape, key=key,
                            counter=counter, alg=alg, dtype=dtype)
        minval = convert_to_tensor(minval, dtype=dtype, name="min")
        maxval = convert_to_tensor(maxval, dtype=dtype, name="max")
        key, counter, alg = key_counter_alg(seed, alg)
        if dtype.is_integer:
            return apply_op(StatelessRandomUniformIntV2, name=scope, shape=shape, key=key, counter=counter,
                            alg=alg, minval=minval, maxval=maxval)
        rnd = apply_op(StatelessRandomUniformV2, shape=shape, key=key, counter=counter, alg=alg, dtype=dtype)
        return add(rnd * (maxval - minval), minval, name=scope)


def _stateless_scaled(op_def: OpDef, default_name: str, shape: Any, seed: Any, mean: Any, stddev: Any,
                      dtype: Any, name: Optional[str], alg: Any) -> Any:
    dtype = _dtypes.as_dtype(dtype).base_dtype
    with _graph.name_scope(name, default_name, [shape, seed, mean, stddev]) as scope:
        shape = _shape_tensor(shape)
        mean = convert_to_tensor(mean, dtype=dtype, name="mean")
        stddev = convert_to_tensor(stddev, dtype=dtype, name="stddev")
        key, counter, alg = key_counter_alg(seed, alg)
        rnd = apply_op(op_def, shape=shape, key=key, counter=counter, alg=alg, dtype=dtype)
        return add(rnd * stddev, mean, name=scope)


def stateless_random_normal(shape: Any, seed: Any, mean: Any = 0.0, stddev: Any = 1.0,
                            dtype: Any = _dtypes.float32, name: Optional[str] = None,
                            alg: Any = "auto_select") -> Any:
    """tf.random.stateless_normal: normal values fixed by `seed`."""
    return _stateless_scaled(StatelessRandomNormalV2, "stateless_random_normal", shape, seed, mean, stddev,
                             dtype, name, alg)


def stateless_truncated_normal(shape: Any, seed: Any, mean: Any = 0.0, stddev: Any = 1.0,
                               dtype: Any = _dtypes.float32, name: Optional[str] = None,
                               alg: Any = "auto_select") -> Any:
    """tf.random.stateless_truncated_normal: truncated normal values fixed by `seed`."""
    return _stateless_scaled(StatelessTruncatedNormalV2, "stateless_truncated_normal", shape, seed, mean,
                             stddev, dtype, name, alg)
