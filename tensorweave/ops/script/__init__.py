"""`tf.py_func`: Python functions as graph nodes."""
