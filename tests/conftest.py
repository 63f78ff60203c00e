import os

import pytest

import tensorweave as tf
from tensorweave.runtime import plan_codegen


@pytest.fixture(autouse=True)
def fresh_default_graph():
    """Each test starts with an empty default graph and no graph-level seed."""
    tf.reset_default_graph()
    yield
    tf.reset_default_graph()


@pytest.fixture(autouse=True)
def generated_code_from_first_step(monkeypatch):
    """TW_TEST_GENERATED_CODE=1: plans run their generated straight-line code from their first
    step (runtime/plan_codegen.py), so the suite's one-step sessions exercise it too."""
    if os.environ.get("TW_TEST_GENERATED_CODE") == "1":
        monkeypatch.setattr(plan_codegen, "INTERPRETED_STEPS", 0)
    yield
