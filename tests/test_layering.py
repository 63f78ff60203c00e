"""The package's layering (DESIGN.md "Layers and folders"), checked by tests/layering.py."""
from tests import layering


def test_no_layering_violations():
    found = layering.violations()
    assert found == [], "layering violations:\n" + "\n".join(found)


def test_every_late_import_on_the_allow_list_is_still_there():
    # a stale entry would let a later late import pass unexplained
    files = dict(layering.module_files())
    known = set(files)
    late = {(m, imp.target) for m, path in files.items()
            for imp in layering.imports_of(path, m, known) if imp.late}
    assert set(layering.LATE_IMPORTS) <= late, set(layering.LATE_IMPORTS) - late


def test_tiers_are_assigned_as_documented():
    assert layering.ops_place("tensorweave.ops.nn.conv") == ("nn", 1)
    assert layering.ops_place("tensorweave.ops.nn.rnn") == ("nn", 2)
    assert layering.ops_place("tensorweave.ops.nn") == ("nn", 2)
    assert layering.ops_place("tensorweave.ops.nn.grad") == ("nn", 3)
    assert layering.ops_place("tensorweave.ops.kernels.conv") == (None, 0)
    assert layering.ops_place("tensorweave.ops._util") == (None, 0)


def test_the_checker_reports_what_it_must():
    where = "tensorweave.ops.nn.conv:1"
    assert layering._tier_problem(where, "nn", 1, "tensorweave.ops.math.reduction")  # another family
    assert layering._tier_problem(where, "nn", 1, "tensorweave.ops.nn.rnn")  # own tier 2
    assert layering._tier_problem(where, "nn", 1, "tensorweave.ops.nn.grad")  # a gradient module
    assert not layering._tier_problem(where, "nn", 1, "tensorweave.ops.nn.nn_ops")
    assert not layering._tier_problem(where, "nn", 1, "tensorweave.ops.kernels.conv")
    assert not layering._tier_problem("tensorweave.ops.nn.rnn:1", "nn", 2, "tensorweave.ops.math.reduction")
    assert layering._tier_problem("tensorweave.ops.kernels.conv:1", None, 0, "tensorweave.ops.nn.conv")
    assert layering.layer("tensorweave.runtime.session") > layering.layer("tensorweave.ops.nn.conv")
    cycles = layering._cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}})
    assert cycles == [["a", "b", "c"]]
