"""The public namespaces against TensorFlow 1.x's name list (tests/data/tf215_v1_names.json, TF
2.15.1's tf.compat.v1): (a) every public name a namespace exports is a TF name of that namespace
(or a listed tensorweave-only name); (b) every TF name not provided raises AttributeError saying
so; (c) names that are one object in TF are one object here. Driven by what each module actually
exports, so it keeps holding as namespaces gain names."""
import json
import os
import types

import pytest

import tensorweave as tf
from tensorweave._names import tf1_names

FIXTURE = json.load(open(os.path.join(os.path.dirname(__file__), "data", "tf215_v1_names.json")))
NAMESPACES = FIXTURE["namespaces"]

# Public names tensorweave exports that TF 1.x's API does not have, each with its reason.
TENSORWEAVE_ONLY = {
    "": {
        "IndexedSlicesValue": "the fetched value of IndexedSlices (TF keeps it internal)",
        "Initializer": "the base class of the initializers (TF: tf.keras.initializers.Initializer)",
        "VariableV1": "TF 1.x's Variable class under its TF 2 name (tf.Variable is the same class)",
        "contrib": "TF 1.15's tf.contrib, which TF 2 (the name list's source) no longer has",
        "RegisterStatistics": "TF 1.x's FLOP-count registration (ops.RegisterStatistics), named by issue 12",
    },
    "train": {
        "BaseSaverBuilder": "the saver's builder, public in TF 1.x's tf.train.Saver(builder=...)",
        "BulkSaverBuilder": "the saver's builder, public in TF 1.x's tf.train.Saver(builder=...)",
        "LBFGSOptimizer": "tensorweave's L-BFGS optimizer (TF 1.x had it only through contrib.opt)",
    },
}


def resolve(namespace):
    """The module standing for TF's `namespace`, or the AttributeError raised on the way."""
    module = tf
    for part in namespace.split(".") if namespace else []:
        try:
            module = getattr(module, part)
        except AttributeError as err:
            return err
    return module


def provided_namespaces():
    return [ns for ns in sorted(NAMESPACES) if isinstance(resolve(ns), types.ModuleType)]


def public_names(namespace, module):
    """The module's public names, less the implementation submodules Python's import system binds
    on a package (tensorweave.framework, tensorweave.layers.core ...), which are not TF names."""
    names = set()
    if hasattr(module, "__all__") and namespace != "":  # a module doubling as a namespace lists its names
        return set(module.__all__)
    for name in dir(module):
        if name.startswith("_"):
            continue
        value = getattr(module, name)
        if isinstance(value, types.ModuleType) and value.__name__ == f"{module.__name__}.{name}" \
                and name not in NAMESPACES[namespace]:
            continue
        names.add(name)
    return names


def test_the_name_list_covers_the_namespaces_programs_use():
    for ns in ("", "nn", "nn.rnn_cell", "train", "math", "linalg", "io", "io.gfile", "gfile", "logging", "app",
               "flags", "compat", "errors", "initializers", "random", "layers", "metrics", "losses", "image",
               "sparse", "summary", "estimator", "data", "saved_model", "version"):
        assert ns in NAMESPACES, ns
    assert len(NAMESPACES[""]) > 600 and NAMESPACES[""]["Session"] == "class"
    assert NAMESPACES["logging"]["INFO"] == "constant" and NAMESPACES[""]["nn"] == "module"


def test_package_name_list_matches_the_fixture():
    # tensorweave/_names/tf1_names.py is written from the same walk as the fixture.
    assert sorted(tf1_names.NAMES) == sorted(NAMESPACES)
    for ns, names in NAMESPACES.items():
        assert sorted(tf1_names.NAMES[ns].split()) == sorted(names), ns


@pytest.mark.parametrize("namespace", provided_namespaces())
def test_no_invented_public_names(namespace):
    module = resolve(namespace)
    allowed = set(NAMESPACES[namespace]) | set(TENSORWEAVE_ONLY.get(namespace, {}))
    invented = sorted(public_names(namespace, module) - allowed)
    assert not invented, f"tf.{namespace} exports names TF 1.x does not have: {invented}"


@pytest.mark.parametrize("namespace", sorted(NAMESPACES))
def test_missing_tf_names_say_they_are_not_provided(namespace):
    module = resolve(namespace)
    if not isinstance(module, types.ModuleType):
        # The namespace itself is missing: its parent says so.
        assert isinstance(module, AttributeError)
        assert "is not provided by tensorweave" in str(module), str(module)
        return
    shown = "tf." + namespace if namespace else "tf"
    assert hasattr(module, "__getattr__"), (
        f"{module.__name__} (tf.{namespace}) needs the line `__getattr__ = _module_getattr({namespace!r}, __name__)` "
        f"(from tensorweave._names.missing import module_getattr as _module_getattr) so that the TF names it "
        f"lacks say they are not provided")
    for name in sorted(NAMESPACES[namespace]):
        if hasattr(module, name):
            continue
        with pytest.raises(AttributeError, match=f"^{shown}.{name} is not provided by tensorweave"):
            getattr(module, name)


def test_a_name_tf_lacks_is_an_ordinary_attribute_error():
    with pytest.raises(AttributeError, match="module 'tensorweave' has no attribute 'no_such_thing'"):
        tf.no_such_thing  # noqa: B018
    with pytest.raises(AttributeError, match="module 'tensorweave.nn' has no attribute 'relu7'"):
        tf.nn.relu7  # noqa: B018
    assert not hasattr(tf.io.gfile, "Exists")  # the CamelCase names are tf.gfile's only
    with pytest.raises(ImportError):
        exec("from tensorweave.nn import no_such_op", {})


def _lookup(full):
    namespace, _, name = full.rpartition(".")
    module = resolve(namespace)
    if not isinstance(module, types.ModuleType):
        return None
    return getattr(module, name, None)


@pytest.mark.parametrize("group", FIXTURE["aliases"], ids=lambda g: g[0])
def test_tf_aliases_are_one_object(group):
    found = {full: obj for full in group if (obj := _lookup(full)) is not None}
    assert len({id(obj) for obj in found.values()}) <= 1, f"{sorted(found)} are one object in TF"


def test_known_aliases_and_counts():
    assert tf.nn.softmax is tf.math.softmax and tf.mod is tf.floormod and tf.nn.avg_pool2d is tf.nn.avg_pool
    assert tf.initializers.zeros is tf.zeros_initializer and tf.initializers.variance_scaling is \
        tf.variance_scaling_initializer
    assert tf.manip.tile is tf.tile and tf.linalg.tensor_diag is tf.diag and tf.no_gradient is tf.NotDifferentiable
    assert tf.gfile.Open is tf.gfile.GFile is tf.io.gfile.GFile and tf.app.flags is tf.flags
    # Everyday namespaces are complete.
    for ns in ("app", "errors", "gfile", "io.gfile", "logging", "version", "python_io", "queue",
               "train.queue_runner"):
        assert set(NAMESPACES[ns]) <= public_names(ns, resolve(ns)), ns
