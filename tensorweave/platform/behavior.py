"""The TF 2 behaviour switches a TF1 program calls at its start (`tf.disable_v2_behavior()`,
`tf.disable_eager_execution()` ... as `import tensorflow.compat.v1 as tf` programs do) and their
queries. tensorweave always runs TF 1.x's behaviour, graph mode, v1 control flow and reference
variables, so the switches have nothing left to change and the queries report that state, as TF
does after `disable_v2_behavior()`. The matching `enable_*` functions are not provided: tensorweave
has no TF 2 behaviour to turn on."""


def disable_v2_behavior() -> None:
    """Turns TF 2 behaviour off: always so here."""


def disable_eager_execution() -> None:
    """Turns eager execution off: programs here always build graphs."""


def disable_control_flow_v2() -> None:
    """Selects v1 control flow (Switch/Merge/Enter/Exit): always so here."""


def disable_resource_variables() -> None:
    """Selects reference variables for new variables: always so here."""


def disable_tensor_equality() -> None:
    """Makes `==` on tensors compare identity, TF 1.x's behaviour: always so here."""


def disable_v2_tensorshape() -> None:
    """Makes TensorShape hold Dimension objects, TF 1.x's behaviour: always so here."""


def executing_eagerly() -> bool:
    return False


def executing_eagerly_outside_functions() -> bool:
    return False


def control_flow_v2_enabled() -> bool:
    return False


def resource_variables_enabled() -> bool:
    return False
