"""Process-level services of TF1's `tensorflow.python.platform`: command-line flags and the
program entry point (absl), the 'tensorflow' logger, file access (gfile) and the version strings.
The public namespaces (tf.app, tf.flags, tf.logging, tf.gfile, tf.version) re-export from here."""
