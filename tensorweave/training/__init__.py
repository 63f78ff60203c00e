"""Training: optimizers, learning-rate schedules, global step (and later Saver, queue runners)."""
