"""tf.__version__ / tf.VERSION name the TF1 API level, and tf.compat.v1 is the API itself."""
import pytest

import tensorweave as tf


def test_version_names_a_tf1_release():
    assert tf.__version__ == tf.VERSION
    major, minor, _ = (int(p) for p in tf.__version__.split("."))
    assert (major, minor) == (1, 15)
    assert isinstance(tf.GIT_VERSION, str)


def test_compat_v1_is_the_package():
    assert tf.compat.v1 is tf
    assert tf.compat.v1.compat.v1.placeholder is tf.placeholder
    with pytest.raises(AttributeError, match="v3"):
        tf.compat.v3


def test_compat_text_helpers():
    assert tf.compat.as_bytes("été") == "été".encode("utf-8")
    assert tf.compat.as_bytes(bytearray(b"ab")) == b"ab"
    assert tf.compat.as_text(b"\xc3\xa9") == "é"
    assert tf.compat.as_str("x") == "x"
    assert tf.compat.as_str_any(b"y") == "y" and tf.compat.as_str_any(3) == "3"
    with pytest.raises(TypeError, match="Expected binary or unicode string"):
        tf.compat.as_bytes(3)
    with pytest.raises(TypeError, match="Expected binary or unicode string"):
        tf.compat.as_text(None)
