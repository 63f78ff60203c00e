"""Registry coverage: every registered op has a shape function and a CPU kernel (or is run by
the executor itself), and apply_op validates attrs and dtypes."""
import pytest

import tensorweave as tf
from tensorweave.framework import op_def


def test_every_op_has_shape_fn_and_cpu_kernel():
    ops = op_def.registered_ops()
    assert len(ops) > 100
    missing_shape = [n for n, d in ops.items() if d.shape_fn is None]
    missing_kernel = [n for n, d in ops.items()
                      if d.control_flow is None and d.find_kernel("CPU") is None]
    assert not missing_shape, f"ops without shape functions: {missing_shape}"
    assert not missing_kernel, f"ops without CPU kernels: {missing_kernel}"


def test_duplicate_definition_rejected():
    with pytest.raises(ValueError):
        op_def.define_op("Const", outputs=["output: dtype"], attrs=["dtype: type"])


def test_signature_parsing():
    d = op_def.get_op_def("MatMul")
    assert [a.name for a in d.inputs] == ["a", "b"]
    assert d.inputs[0].type_attr == "T"
    assert d.attrs["transpose_a"].default is False
    assert tf.float32 in d.attrs["T"].allowed and tf.string not in d.attrs["T"].allowed


def test_apply_op_rejects_bad_types_and_attrs():
    with pytest.raises(TypeError):
        tf.matmul(tf.constant([["a"]]), tf.constant([["b"]]))
    with pytest.raises(TypeError):
        tf.add(tf.constant(1.0), tf.constant(1))
    with pytest.raises(TypeError):
        tf.constant(1.5, dtype=tf.int32)
    with pytest.raises(ValueError):
        op_def.get_op_def("NoSuchOp")


def test_attr_minimum_is_parsed_and_enforced():
    definition = op_def.get_op_def("ConcatV2")
    assert definition.attrs["N"].kind == "int" and definition.attrs["N"].minimum == 2
    assert not definition.attrs["N"].has_default
    spec = op_def._parse_attr("N: int >= 2 = 3")
    assert (spec.kind, spec.minimum, spec.default) == ("int", 2, 3)
    with pytest.raises(ValueError):
        tf.add_n([])
