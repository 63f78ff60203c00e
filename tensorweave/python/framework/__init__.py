"""TF1's `tensorflow.python.framework` paths that programs import directly."""
