"""The version strings programs read (tf.VERSION, tf.__version__, tf.version.*): tensorweave runs
the TF 1.x API, so it reports TF 1.15's (programs test `tf.__version__.startswith('1.')` or the
major version to choose the TF1 code path). GRAPH_DEF_VERSION* are the GraphDef versions TF 1.15
writes and accepts (core/public/version.h). tensorweave's own version is TENSORWEAVE_VERSION."""

VERSION = "1.15.5"
GIT_VERSION = "v1.15.4-39-g3db52be"
COMPILER_VERSION = "7.3.1 20180303"
GRAPH_DEF_VERSION = 134
GRAPH_DEF_VERSION_MIN_CONSUMER = 0
GRAPH_DEF_VERSION_MIN_PRODUCER = 0

TENSORWEAVE_VERSION = "0.1.0"  # pyproject.toml's [project] version
