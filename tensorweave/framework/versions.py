"""The TensorFlow API level tensorweave implements: TF1 programs read tf.__version__ / tf.VERSION
to choose their code paths (e.g. `if tf.__version__ < "1.4"` or a 2.x branch), so these name the
last TF1 release, whose graph-mode API this package follows."""

VERSION = "1.15.5"
__version__ = VERSION
GIT_VERSION = "v1.15.5-tensorweave"
