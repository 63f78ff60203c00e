"""Image ops (tf.image)."""
