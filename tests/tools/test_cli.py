"""The `tensorweave` command: `show` (saved_model_cli's listing, and GraphDef files), `run` (a
signature on NumPy files), and the main job when no subcommand is given."""
import io
import os

import numpy as np
import pytest

from tensorweave.tools import cli, saved_model_cli

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data")
TW_DIR = os.path.join(DATA, "tw_saved_model")
TF_DIR = os.path.join(DATA, "tf_saved_model")


def _show(*argv):
    out = io.StringIO()
    assert saved_model_cli.show_main(list(argv), out) == 0
    return out.getvalue()


def test_show_tag_sets_signature_keys_and_signature():
    assert _show("--dir", TF_DIR) == "The given SavedModel contains the following tag-sets:\n'serve'\n"
    assert _show("--dir", TW_DIR, "--tag_set", "serve") == (
        "The given SavedModel MetaGraphDef contains SignatureDefs with the following keys:\n"
        'SignatureDef key: "probs_only"\nSignatureDef key: "serving_default"\n')
    assert _show("--dir", TW_DIR, "--tag_set", "serve", "--signature_def", "probs_only") == (
        "The given SavedModel SignatureDef contains the following input(s):\n"
        "  inputs['x'] tensor_info:\n      dtype: DT_FLOAT\n      shape: (-1, 6)\n      name: x:0\n"
        "The given SavedModel SignatureDef contains the following output(s):\n"
        "  outputs['probs'] tensor_info:\n      dtype: DT_FLOAT\n      shape: (-1, 3)\n"
        "      name: model/output:0\n"
        "Method name is: tensorflow/serving/predict\n")
    text = _show("--dir", TW_DIR, "--all")
    assert "MetaGraphDef with tag-set: 'serve' contains the following SignatureDefs:" in text
    assert "signature_def['serving_default']:" in text and "    outputs['labels'] tensor_info:" in text
    assert "        dtype: DT_STRING\n        shape: ()\n" in text
    with pytest.raises(RuntimeError, match="could not be found"):
        _show("--dir", TW_DIR, "--tag_set", "train")
    with pytest.raises(ValueError, match='Could not find signature "nope"'):
        _show("--dir", TW_DIR, "--tag_set", "serve", "--signature_def", "nope")


def test_show_graph_binary_and_text():
    text = _show("--graph", os.path.join(DATA, "tf_graphs", "lstm.pb"))
    assert "  input:0  dtype: DT_FLOAT  shape: (-1, 4, 2)\n" in text
    assert "  output (Identity)\n" in text and "  TensorArrayV3: " in text
    assert _show("--graph", os.path.join(DATA, "tf_graphs", "mlp.pbtxt")) == \
        _show("--graph", os.path.join(DATA, "tf_graphs", "mlp.pb"))


def test_run_prints_and_writes_outputs(tmp_path, capsys):
    expected = np.load(os.path.join(DATA, "tw_saved_model_expected.npz"))
    np.save(tmp_path / "x.npy", expected["x"])
    assert cli.main(["run", "--dir", TW_DIR, "--tag_set", "serve", "--signature_def", "probs_only",
                     "--inputs", f"x={tmp_path / 'x.npy'}"]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("Result for output key probs:\n[[")
    np.savez(tmp_path / "in.npz", a=np.zeros([1, 6], np.float32), b=expected["x"])
    outdir = tmp_path / "out"
    assert cli.main(["run", "--dir", TW_DIR, "--tag_set", "serve", "--inputs", f"x={tmp_path / 'in.npz'}[b]",
                     "--outdir", str(outdir)]) == 0
    np.testing.assert_allclose(np.load(outdir / "probs.npy"), expected["probs"], rtol=1e-5)
    assert np.load(outdir / "labels.npy", allow_pickle=True) == b"cat\ndog\nbird\n"
    with pytest.raises(RuntimeError, match="already exists"):
        cli.main(["run", "--dir", TW_DIR, "--tag_set", "serve", "--input_exprs", "x=np.ones((2, 6))",
                  "--outdir", str(outdir)])
    assert cli.main(["run", "--dir", TW_DIR, "--tag_set", "serve", "--signature_def", "probs_only",
                     "--input_exprs", "x=np.ones((2, 6), np.float32)", "--outdir", str(outdir), "--overwrite"]) == 0
    assert np.load(outdir / "probs.npy").shape == (2, 3)


def test_run_runs_tensorflows_saved_model(tmp_path):
    expected = np.load(os.path.join(DATA, "tf_saved_model_expected.npz"))
    np.savez(tmp_path / "only.npz", anything=expected["x"])
    results = saved_model_cli.run_saved_model(TF_DIR, ["serve"], "serving_default",
                                              saved_model_cli.build_feeds(f"x={tmp_path / 'only.npz'}", None))
    np.testing.assert_allclose(results["probs"], expected["probs"], rtol=1e-5)


def test_run_input_errors(tmp_path):
    np.savez(tmp_path / "two.npz", a=np.zeros(1), b=np.zeros(1))
    with pytest.raises(ValueError, match="several arrays"):
        saved_model_cli.build_feeds(f"x={tmp_path / 'two.npz'}", None)
    with pytest.raises(ValueError, match='does not contain variable "c"'):
        saved_model_cli.build_feeds(f"x={tmp_path / 'two.npz'}[c]", None)
    with pytest.raises(ValueError, match="format is incorrect"):
        saved_model_cli.build_feeds("no_equals_sign", None)
    with pytest.raises(ValueError, match="not a valid input key"):
        saved_model_cli.run_saved_model(TW_DIR, ["serve"], "serving_default", {"z": np.zeros([1, 6])})
    with pytest.raises(ValueError, match="Missing input"):
        saved_model_cli.run_saved_model(TW_DIR, ["serve"], "serving_default", {})


def test_no_subcommand_runs_main_job(monkeypatch):
    seen = []
    monkeypatch.setattr(cli.mnist, "main", lambda argv: seen.append(argv) or 0.9)
    assert cli.main(["--steps", "5"]) == 0
    assert cli.main([]) == 0
    assert seen == [["--steps", "5"], []]
    assert set(cli.SUBCOMMANDS) >= {"show", "run", "trace"}


def test_help_lists_subcommands(capsys):
    assert cli.main(["help"]) == 0
    assert "run, server, show, trace" in capsys.readouterr().out
