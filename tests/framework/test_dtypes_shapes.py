import numpy as np
import pytest

import tensorweave as tf


@pytest.mark.parametrize("name", ["float16", "float32", "float64", "int8", "int16", "int32", "int64",
                                  "uint8", "uint16", "bool", "complex64", "complex128", "string"])
def test_dtype_round_trip(name):
    dt = tf.as_dtype(name)
    assert dt.name == name
    assert tf.as_dtype(dt.as_numpy_dtype) == dt
    assert tf.as_dtype(dt.as_datatype_enum) is dt
    assert dt.base_dtype is dt
    assert dt._as_ref.base_dtype is dt and dt._as_ref.is_ref_dtype


def test_dtype_properties():
    assert tf.float32.is_floating and not tf.float32.is_integer
    assert tf.int32.is_integer and not tf.int32.is_floating
    assert tf.uint8.is_unsigned and not tf.int8.is_unsigned
    assert tf.complex64.is_complex and tf.complex64.real_dtype == tf.float32
    assert tf.bool.is_bool
    assert tf.float32.as_numpy_dtype is np.float32
    assert tf.as_dtype(np.dtype("float64")) == tf.float64
    assert tf.int32.max == 2**31 - 1 and tf.int8.min == -128
    assert tf.float32 == "float32" and tf.float32 != tf.float64
    assert repr(tf.float32) == "tf.float32"
    with pytest.raises(TypeError):
        tf.as_dtype("not_a_type")
    with pytest.raises(TypeError):
        _ = tf.string.max


def test_tensor_shape_basics():
    s = tf.TensorShape([None, 3])
    assert s.ndims == 2 and s.as_list() == [None, 3]
    assert not s.is_fully_defined()
    assert s.is_compatible_with([5, 3]) and not s.is_compatible_with([5, 4])
    assert s.merge_with([5, None]).as_list() == [5, 3]
    with pytest.raises(ValueError):
        s.merge_with([5, 4])
    unknown = tf.TensorShape(None)
    assert unknown.ndims is None and unknown.is_compatible_with([1, 2, 3])
    with pytest.raises(ValueError):
        unknown.as_list()
    assert tf.TensorShape([2, 3]).num_elements() == 6
    assert tf.TensorShape([2, None]).num_elements() is None
    assert s[1].value == 3 and s[0].value is None
    assert int(s[1]) == 3
    assert s.concatenate([7]).as_list() == [None, 3, 7]
    assert str(tf.TensorShape([2, None])) == "(2, ?)"
    with pytest.raises(ValueError):
        tf.TensorShape([1, 2]).with_rank(3)
    assert tf.TensorShape([2, 3]).most_specific_compatible_shape([2, 4]).as_list() == [2, None]


def test_dimension_arithmetic():
    d = tf.Dimension(4)
    assert (d + 1).value == 5 and (d * tf.Dimension(None)).value is None
    assert d == 4 and (tf.Dimension(None) == 4) is None
    with pytest.raises(ValueError):
        tf.Dimension(-1)


def test_dtype_c_spellings_and_limits_as_tf():
    # TF accepts the C++ names of the floating types; bool has no min/max (TypeError, as TF).
    assert tf.as_dtype("float") is tf.float32 and tf.as_dtype("double") is tf.float64
    assert tf.as_dtype("half") is tf.float16
    assert tf.as_dtype("float_ref").base_dtype is tf.float32
    assert tf.as_dtype(np.float16) is tf.float16 and tf.as_dtype(float) is tf.float32
    assert tf.float16.max == np.finfo(np.float16).max and tf.uint16.max == 65535
    assert tf.int64.min == np.iinfo(np.int64).min
    for limit in ("min", "max"):
        with pytest.raises(TypeError):
            getattr(tf.bool, limit)
    assert tf.int32.size == 4 and tf.complex128.size == 16
    assert str(tf.float32) == "<dtype: 'float32'>"
    assert tf.as_dtype("float32_ref").is_compatible_with(tf.float32) is False
    assert tf.float32.is_compatible_with(tf.as_dtype("float32_ref"))

def test_string_numpy_dtype_is_object():
    assert tf.string.as_numpy_dtype is object
    assert tf.as_dtype(np.dtype(object)) is tf.string and tf.as_dtype(np.str_) is tf.string
