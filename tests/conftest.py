import pytest

import tensorweave as tf


@pytest.fixture(autouse=True)
def fresh_default_graph():
    """Each test starts with an empty default graph and no graph-level seed."""
    tf.reset_default_graph()
    yield
    tf.reset_default_graph()
