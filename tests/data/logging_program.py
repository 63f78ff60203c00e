"""A TF1 program exercising tf.logging, run as a script under either library:
`python logging_program.py tensorflow|tensorweave`. make_tf_logging_fixtures.py records what
TensorFlow 2.21 prints; tests/platform/test_logging.py runs it under tensorweave and compares."""
import os
import sys

if sys.argv[1] == "tensorflow":
    os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
    import tensorflow.compat.v1 as tf
else:
    import tensorweave as tf


def train_step(i):
    tf.logging.log_every_n(tf.logging.INFO, "step %d", 4, i)


def main():
    tf.logging.info("before set_verbosity: hidden")
    tf.logging.warning("warnings show by default")
    print("verbosity", tf.logging.get_verbosity(), flush=True)
    tf.logging.set_verbosity(tf.logging.INFO)
    print("verbosity", tf.logging.get_verbosity(), flush=True)
    tf.logging.info("loss = %.3f, step = %d", 0.25, 7)
    tf.logging.info({"a": 1})
    tf.logging.warn("warn is warning")
    tf.logging.error("an error")
    tf.logging.fatal("fatal does not exit")
    tf.logging.debug("debug hidden at INFO")
    tf.logging.log(tf.logging.ERROR, "log at %s", "ERROR")
    tf.logging.vlog(tf.logging.WARN, "vlog at WARN")
    tf.logging.log_if(tf.logging.INFO, "log_if true", True)
    tf.logging.log_if(tf.logging.INFO, "log_if false", False)
    tf.logging.TaskLevelStatusMessage("status message")
    for i in range(6):
        tf.logging.log_first_n(tf.logging.INFO, "first_n %d", 3, i)
    for i in range(10):
        train_step(i)
    for i in range(7):
        tf.logging.log_first_n(tf.logging.INFO, "first 2 %d", 2, i)
        tf.logging.log_every_n(tf.logging.INFO, "every 3 %d", 3, i)
    tf.logging.set_verbosity(tf.logging.DEBUG)
    tf.logging.debug("debug shown")
    tf.logging.set_verbosity(tf.logging.ERROR)
    tf.logging.warning("hidden at ERROR")
    tf.logging.error("shown at ERROR")


if __name__ == "__main__":
    main()
