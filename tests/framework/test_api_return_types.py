"""bytes vs str (and DType, TensorShape, protos) from public APIs that return names, attrs and
NodeDef fields, against the types TF 2.21 returns (tests/data/tf_bytes_expected.json, written by
tests/data/make_tf_bytes_fixtures.py from tests/data/bytes_cases.py)."""
import json
import os

import pytest

import tensorweave as tf
from tests.data import bytes_cases

with open(os.path.join(os.path.dirname(bytes_cases.__file__), "tf_bytes_expected.json")) as _f:
    EXPECTED = json.load(_f)

_GOT = {}


def _got():
    if not _GOT:
        _GOT.update(bytes_cases.probe(tf))
    return _GOT


@pytest.mark.parametrize("api", sorted(EXPECTED))
def test_return_type_matches_tf(api):
    assert _got()[api] == EXPECTED[api]


def test_values_in_tf_form():
    with tf.Graph().as_default():
        v = tf.Variable(1.0, name="v")
        with tf.colocate_with(v):
            near = tf.identity(v, name="near")
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        c = tf.constant([[1, 2]], name="c")
        assert near.op.colocation_groups() == [b"loc:@v"]
        assert near.op.get_attr("_class") == [b"loc:@v"]
        assert x.op.colocation_groups() == [b"loc:@x"]
        assert v.op.get_attr("shared_name") == b""
        shape = x.op.get_attr("shape")
        assert [d.size for d in shape.dim] == [-1, 3] and tf.TensorShape(shape).as_list() == [None, 3]
        assert tf.make_ndarray(c.op.get_attr("value")).tolist() == [[1, 2]]
        assert x.op.get_attr("dtype") == tf.float32
        with pytest.raises(ValueError, match="no attr named 'nope'"):
            x.op.get_attr("nope")
