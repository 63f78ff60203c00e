"""Checks and printing as graph nodes: Assert, Print, PrintV2, CheckNumerics, and the tf.debugging assert_* family."""
