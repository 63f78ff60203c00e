"""TF 1.x's public names (recorded from TF 2.15.1's tf.compat.v1) and the AttributeError for the ones
tensorweave does not provide: data and a lookup, importable from every layer."""
