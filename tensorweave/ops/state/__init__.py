"""State (white paper 2 "Variables", 4.7; OSDI 3.1): variable ops and the optimizers' update kernels
(variable_ops, training_ops), mutexes (mutex), and the Python libraries over them (tier 2):
tf.Variable and PartitionedVariable (variables), partitioners (partitioned_variables),
variable_scope and get_variable (variable_scope), initializers (init_ops), make_template
(template) and tf.CriticalSection (critical_section).

The family's public names (TF's state_ops, variables, variable_scope and init_ops namespaces) are
re-exported here."""
from tensorweave.ops.state.critical_section import CriticalSection
from tensorweave.ops.state.init_ops import (
    constant_initializer, glorot_normal_initializer, glorot_uniform_initializer, Initializer,
    ones_initializer, random_normal_initializer, random_uniform_initializer, truncated_normal_initializer,
    uniform_unit_scaling_initializer, variance_scaling_initializer, zeros_initializer)
from tensorweave.ops.state.partitioned_variables import (
    create_partitioned_variables, fixed_size_partitioner, min_max_variable_partitioner,
    variable_axis_size_partitioner)
from tensorweave.ops.state.template import make_template
from tensorweave.ops.state.variable_ops import (
    assign, assign_add, assign_sub, count_up_to, is_variable_initialized, scatter_add, scatter_div,
    scatter_mul, scatter_sub, scatter_update)
from tensorweave.ops.state.variable_scope import (
    AUTO_REUSE, get_local_variable, get_variable, get_variable_scope, no_regularizer, variable_scope,
    VariableScope)
from tensorweave.ops.state.variables import (
    all_variables, assert_variables_initialized, global_variables, global_variables_initializer,
    initialize_all_variables, initialize_local_variables, initialize_variables, local_variables,
    local_variables_initializer, model_variables, moving_average_variables, report_uninitialized_variables,
    PartitionedVariable, trainable_variables, Variable, variables_initializer, VariableV1)

__all__ = [
    "assign", "assign_add", "assign_sub", "is_variable_initialized", "scatter_update", "scatter_add",
    "scatter_sub", "scatter_mul", "scatter_div", "count_up_to",
    "Variable", "VariableV1", "global_variables", "local_variables", "trainable_variables",
    "all_variables", "model_variables", "moving_average_variables", "global_variables_initializer",
    "local_variables_initializer", "variables_initializer", "initialize_all_variables",
    "initialize_local_variables", "initialize_variables", "report_uninitialized_variables",
    "assert_variables_initialized",
    "VariableScope", "variable_scope", "get_variable", "get_variable_scope", "AUTO_REUSE",
    "get_local_variable", "no_regularizer",
    "Initializer", "zeros_initializer", "ones_initializer", "constant_initializer",
    "random_uniform_initializer", "random_normal_initializer", "truncated_normal_initializer",
    "glorot_uniform_initializer", "glorot_normal_initializer", "variance_scaling_initializer",
    "uniform_unit_scaling_initializer",
    "make_template", "CriticalSection",
    "PartitionedVariable", "fixed_size_partitioner", "variable_axis_size_partitioner",
    "min_max_variable_partitioner", "create_partitioned_variables",
]
