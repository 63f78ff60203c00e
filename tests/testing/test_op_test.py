"""The shared error assertions: they return the error raised and fail when none, another class,
or a non-matching message is raised."""
import pytest

import tensorweave as tf
from tensorweave.testing.op_test import assert_build_error, assert_run_error


def test_assert_run_error_returns_the_error():
    x = tf.placeholder(tf.float32)
    y = tf.reshape(x, [2, 2])
    err = assert_run_error(y, {x: [1.0, 2.0, 3.0]}, match=r"Input to reshape is a tensor with 3 values")
    assert isinstance(err, tf.errors.InvalidArgumentError) and err.op is y.op


def test_assert_run_error_fails_without_an_error_or_with_another_message():
    x = tf.placeholder(tf.float32)
    y = tf.reshape(x, [2])
    with pytest.raises(AssertionError, match="expected InvalidArgumentError"):
        assert_run_error(y, {x: [1.0, 2.0]})
    with pytest.raises(AssertionError, match="does not match"):
        assert_run_error(y, {x: [1.0, 2.0, 3.0]}, match="something else")
    with pytest.raises(tf.errors.InvalidArgumentError):  # another class propagates
        assert_run_error(y, {x: [1.0, 2.0, 3.0]}, error=tf.errors.NotFoundError)


def test_assert_build_error():
    err = assert_build_error(tf.reshape, tf.constant([1.0, 2.0, 3.0]), [2, 2], match="Cannot reshape")
    assert isinstance(err, ValueError)
    with pytest.raises(AssertionError, match="expected ValueError"):
        assert_build_error(tf.reshape, tf.constant([1.0, 2.0]), [2])
