"""`tf.train`: optimizers, learning-rate schedules and the global step (re-exports only)."""
from tensorweave.training.adadelta import AdadeltaOptimizer  # noqa: F401
from tensorweave.training.adagrad import AdagradOptimizer  # noqa: F401
from tensorweave.training.adam import AdamOptimizer  # noqa: F401
from tensorweave.training.ftrl import FtrlOptimizer  # noqa: F401
from tensorweave.training.gradient_descent import GradientDescentOptimizer  # noqa: F401
from tensorweave.training.lbfgs import LBFGSOptimizer  # noqa: F401
from tensorweave.training.learning_rate_decay import (  # noqa: F401
    exponential_decay, inverse_time_decay, natural_exp_decay, piecewise_constant, polynomial_decay)
from tensorweave.training.momentum import MomentumOptimizer  # noqa: F401
from tensorweave.training.optimizer import Optimizer  # noqa: F401
from tensorweave.training.rmsprop import RMSPropOptimizer  # noqa: F401
from tensorweave.training.training_util import (  # noqa: F401
    create_global_step, get_global_step, get_or_create_global_step, global_step)
