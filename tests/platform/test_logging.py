"""tf.logging: TF1's functions on the 'tensorflow' logger."""
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


def test_log_first_n_and_every_n_count_per_line(collected):
    tf.logging.set_verbosity(tf.logging.INFO)
    for i in range(7):
        tf.logging.log_first_n(tf.logging.INFO, "first %d", 2, i)
        tf.logging.log_every_n(tf.logging.INFO, "every %d", 3, i)
    assert [r.getMessage() for r in collected] == ["first 0", "every 0", "first 1", "every 3", "every 6"]


def test_info_prints_like_tf_after_set_verbosity():
    # A fresh process: TF's handler goes to stderr with logging's basic format.
    code = ("import tensorweave as tf\ntf.logging.info('quiet')\ntf.logging.set_verbosity(tf.logging.INFO)\n"
            "tf.logging.info('step %d', 3)\ntf.logging.warning('careful')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    assert out.stderr.splitlines() == ["INFO:tensorflow:step 3", "WARNING:tensorflow:careful"]
