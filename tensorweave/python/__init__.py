"""TF1's `tensorflow.python` import paths that user programs use directly (see client/)."""
