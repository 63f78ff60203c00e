"""A representative set of the TF1 programs of tests/compat/programs run with every pass forced on
(TW_GRAPPLER=aggressive) and with every pass off: both give TensorFlow's recorded numbers and
agree with each other (the whole set passes either way; these cover MLPs, CNNs, batch norm,
RNNs and while loops, queues, control dependencies, metrics, savers and image ops)."""
import numpy as np
import pytest

import tensorweave as tf
from tests.compat import harness
from tests.grappler.helpers import GrapplerEnv

EXPECTED, _ = harness.load_expected()
PROGRAMS = ["mlp_layers_dropout", "raw_cnn", "cnn_layers_metrics", "batchnorm_checkpoint", "lstm_language_model",
            "while_cond_numeric", "ema_control_dependencies", "gan_two_optimizers", "queue_logreg",
            "image_augment", "losses_zoo", "moments_batchnorm_by_hand", "sampled_softmax_candidates",
            "birnn_dynamic"]


@pytest.mark.parametrize("name", PROGRAMS)
def test_program_same_numbers_with_passes_on_and_off(name, tmp_path):
    results = {}
    for mode in ("off", "aggressive"):
        tf.reset_default_graph()  # each run builds its program from scratch, as its own test would
        workdir = tmp_path / mode
        workdir.mkdir()
        with GrapplerEnv(mode):
            results[mode] = harness.run_program(tf, name, str(workdir))
        harness.compare(name, results[mode], EXPECTED[name])
    rtol, atol = harness.LOOSER.get(name, (harness.RTOL, harness.ATOL))
    for key, value in results["off"].items():
        got = np.asarray(results["aggressive"][key])
        if got.dtype.kind in "fc":
            np.testing.assert_allclose(got, value, rtol=rtol, atol=atol, err_msg=f"{name}[{key}]")
        else:
            np.testing.assert_array_equal(got, value, err_msg=f"{name}[{key}]")
