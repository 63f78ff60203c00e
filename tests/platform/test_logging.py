"""tf.logging: TF1's functions on the 'tensorflow' logger, checked against TensorFlow 2.21's output."""
import json
import logging
import os
import subprocess
import sys

import pytest

import tensorweave as tf


class Collect(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.records = []

    def emit(self, record):
        self.records.append(record)


@pytest.fixture
def collected():
    logger = tf.get_logger()
    handler = Collect()
    old = logger.level
    logger.addHandler(handler)
    yield handler.records
    logger.removeHandler(handler)
    logger.setLevel(old)


def test_levels_are_pythons():
    assert (tf.logging.DEBUG, tf.logging.INFO, tf.logging.WARN, tf.logging.ERROR, tf.logging.FATAL) == \
        (10, 20, 30, 40, 50)
    assert tf.get_logger() is logging.getLogger("tensorflow")


def test_verbosity_filters_and_caller_is_reported(collected):
    tf.logging.set_verbosity(tf.logging.WARN)
    assert tf.logging.get_verbosity() == tf.logging.WARN
    tf.logging.info("hidden")
    tf.logging.warn("shown %d", 1)
    tf.logging.set_verbosity(tf.logging.DEBUG)
    tf.logging.debug("debug")
    tf.logging.error("err")
    tf.logging.fatal("fatal")
    tf.logging.log(tf.logging.INFO, "logged")
    tf.logging.vlog(tf.logging.INFO, "vlogged")
    tf.logging.log_if(tf.logging.INFO, "if-true", True)
    tf.logging.log_if(tf.logging.INFO, "if-false", False)
    tf.logging.TaskLevelStatusMessage("status")
    assert [r.getMessage() for r in collected] == ["shown 1", "debug", "err", "fatal", "logged", "vlogged",
                                                   "if-true", "status"]
    assert [r.levelname for r in collected][:4] == ["WARNING", "DEBUG", "ERROR", "CRITICAL"]
    assert all(r.filename == "test_logging.py" for r in collected)
    tf.logging.flush()


def test_program_prints_what_tensorflow_prints():
    # tests/data/logging_program.py in a fresh process (TF's handler, TF's counters of
    # log_first_n / log_every_n), against TF 2.21's lines in tf_logging_expected.json.
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    data = os.path.join(root, "tests", "data")
    expected = json.load(open(os.path.join(data, "tf_logging_expected.json")))
    out = subprocess.run([sys.executable, os.path.join(data, "logging_program.py"), "tensorweave"],
                         capture_output=True, text=True, check=True, env=dict(os.environ, PYTHONPATH=root))
    assert out.stdout.splitlines() == expected["stdout"]
    assert out.stderr.splitlines() == expected["stderr"]
