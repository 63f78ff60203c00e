"""tf.errors: TF's classes and canonical codes, and what an OpError carries."""
import pickle

import pytest

import tensorweave as tf
from tensorweave.framework import op_def
from tensorweave.framework.op_def_library import apply_op
from tensorweave.ops import _util

# (class name, TF's canonical error code)
CLASSES = [("CancelledError", 1), ("UnknownError", 2), ("InvalidArgumentError", 3),
           ("DeadlineExceededError", 4), ("NotFoundError", 5), ("AlreadyExistsError", 6),
           ("PermissionDeniedError", 7), ("ResourceExhaustedError", 8),
           ("FailedPreconditionError", 9), ("AbortedError", 10), ("OutOfRangeError", 11),
           ("UnimplementedError", 12), ("InternalError", 13), ("UnavailableError", 14),
           ("DataLossError", 15), ("UnauthenticatedError", 16)]


@pytest.mark.parametrize("name,code", CLASSES, ids=[c[0] for c in CLASSES])
def test_error_classes_and_codes(name, code):
    cls = getattr(tf.errors, name)
    assert issubclass(cls, tf.errors.OpError) and issubclass(cls, Exception)
    err = cls(None, None, "boom")
    assert err.error_code == code and err.message == "boom" and str(err) == "boom"
    assert err.op is None and err.node_def is None
    assert tf.errors.exception_type_from_error_code(code) is cls
    assert tf.errors.error_code_from_exception_type(cls) == code
    again = pickle.loads(pickle.dumps(err))  # errors cross process boundaries
    assert type(again) is cls and again.message == "boom"
    with pytest.raises(tf.errors.OpError):
        raise err


def test_error_code_constants():
    assert (tf.errors.OK, tf.errors.CANCELLED, tf.errors.INVALID_ARGUMENT, tf.errors.NOT_FOUND,
            tf.errors.FAILED_PRECONDITION, tf.errors.OUT_OF_RANGE, tf.errors.UNAVAILABLE) == \
        (0, 1, 3, 5, 9, 11, 14)
    err = tf.errors.OpError(None, None, "generic", tf.errors.ABORTED)
    assert err.error_code == tf.errors.ABORTED


def test_op_error_names_the_op_and_its_creation_line():
    x = tf.placeholder(tf.float32, name="x")
    y = tf.reshape(x, [2, 2], name="my_reshape")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(y, {x: [1.0, 2.0, 3.0]})
    err = info.value
    assert err.op is y.op and err.error_code == tf.errors.INVALID_ARGUMENT
    assert "my_reshape" in str(err) and "test_errors.py" in str(err)
    line = y.op.traceback[1]
    assert f"test_errors.py:{line}" in str(err)
    assert str(err).count("my_reshape (defined at") == 1  # the site is printed once


def test_input_type_mismatch_names_the_argument_that_set_the_type():
    # TF's wording, dtypes printed as TF prints them (float32, not <dtype: 'float32'>)
    with pytest.raises(TypeError, match=r"^Input 'y' of 'AddV2' Op has type float32 that does not match "
                                        r"type int32 of argument 'x'\.$"):
        tf.add(tf.constant(1), tf.constant(1.0))
    with pytest.raises(TypeError, match=r"^Input 'x' of 'LogicalNot' Op has type float32 that does not "
                                        r"match expected type of bool\.$"):
        tf.logical_not(tf.constant(1.0))


def test_error_raised_with_an_op_names_it_once():
    x = tf.constant(1.0, name="site")
    err = tf.errors.InvalidArgumentError(None, x.op, "bad")
    text = str(err)
    assert text.startswith("bad\n\t [[node site (defined at ") and text.count("[[node") == 1
    assert err.message == "bad"


def test_missing_gradient_suggests_how_to_provide_one():
    undifferentiated = op_def.define_op("TestOpWithoutGradient", inputs=["x: float"], outputs=["y: float"],
                                        shape_fn=_util.unchanged)
    try:
        g = tf.Graph()
        with g.as_default():
            x = tf.constant([1.0])
            y = apply_op(undifferentiated, x=x)
            with pytest.raises(LookupError, match=r"No gradient defined for operation .*TestOpWithoutGradient.*"
                                                  r"@TestOpWithoutGradient\.gradient.*not_differentiable.*"
                                                  r"tf\.stop_gradient"):
                tf.gradients(y, x)
            with g.gradient_override_map({"TestOpWithoutGradient": "NeverRegistered"}):
                z = apply_op(undifferentiated, x=x)
            with pytest.raises(LookupError, match=r"gradient_override_map names 'NeverRegistered'"):
                tf.gradients(z, x)
    finally:
        op_def._REGISTRY.pop("TestOpWithoutGradient")
