"""`tf.contrib.framework`: arg_scope, model variables, variable lookup and the global step
(re-exports only)."""
from tensorweave.contrib.framework.arg_scope import (  # noqa: F401
    add_arg_scope, arg_scope, arg_scope_func_key, arg_scoped_arguments, current_arg_scope, has_arg_scope)
from tensorweave.contrib.framework.checkpoints import assign_from_checkpoint_fn  # noqa: F401
from tensorweave.contrib.framework.variables import (  # noqa: F401
    add_model_variable, get_local_variables, get_model_variables, get_trainable_variables, get_unique_variable,
    get_variable_full_name, get_variables, get_variables_by_name, get_variables_by_suffix,
    get_variables_to_restore, global_variable, local_variable, model_variable, variable)
from tensorweave.training.training_util import (  # noqa: F401
    assert_global_step, create_global_step, get_global_step, get_or_create_global_step)
from tensorweave.contrib._unprovided import unprovided_getattr

__getattr__ = unprovided_getattr("tf.contrib.framework")
