import pytest

import tensorweave as tf
from tensorweave.runtime.resource_mgr import reset_process_resources


@pytest.fixture(autouse=True)
def fresh_default_graph():
    """Each test starts with an empty default graph, no graph-level seed and no shared_name
    resources left by an earlier test."""
    tf.reset_default_graph()
    yield
    tf.reset_default_graph()
    reset_process_resources()
