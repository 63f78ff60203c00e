"""tf.app.run and tf.flags (absl's flags, as TF1 routes them), each in a fresh process since flags
are process-wide."""
import os
import subprocess
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ENV = dict(os.environ, PYTHONPATH=ROOT)  # the program imports this tree's tensorweave

PROGRAM = textwrap.dedent("""
    import sys
    import tensorweave as tf

    flags = tf.app.flags
    flags.DEFINE_string("data_dir", "/tmp/data", "where the data is")
    flags.DEFINE_integer("steps", 10, "training steps")
    flags.DEFINE_float("lr", 0.5, "learning rate")
    flags.DEFINE_boolean("fake", False, "fake data")
    flags.DEFINE_bool("verbose", True, "chatty")
    flags.DEFINE_list("layers", "8,4", "sizes")
    flags.DEFINE_enum("mode", "train", ["train", "eval"], "what to do")
    flags.DEFINE_multi_string("tag", [], "tags")
    flags.DEFINE_multi_integer("seed", [], "seeds")
    flags.DEFINE_multi_float("w", [], "weights")
    flags.DEFINE_multi_enum("opt", [], ["a", "b"], "options")
    flags.DEFINE_string(flag_name="old_style", default_value="x", docstring="TF1 keyword names")
    FLAGS = flags.FLAGS

    def main(argv):
        print(repr((FLAGS.data_dir, FLAGS.steps, FLAGS.lr, FLAGS.fake, FLAGS.verbose, FLAGS.layers, FLAGS.mode,
                    FLAGS.tag, FLAGS.seed, FLAGS.w, FLAGS.opt, FLAGS.old_style, argv[1:])))
        return 0

    if __name__ == "__main__":
        MODE = sys.argv.pop(1)
        if MODE == "run":
            tf.app.run()
        elif MODE == "run_main":
            tf.app.run(main=main, argv=[sys.argv[0], "--steps=3", "rest"])
        else:  # read a flag before any parse: FLAGS parses sys.argv then
            print(FLAGS.steps, FLAGS.fake)
""")


def run(tmp_path, *args):
    path = tmp_path / "prog.py"
    path.write_text(PROGRAM)
    return subprocess.run([sys.executable, str(path), *args], capture_output=True, text=True, env=ENV)


def test_app_run_parses_flags_and_passes_the_rest(tmp_path):
    out = run(tmp_path, "run", "--data_dir=/d", "--steps", "5", "--lr=0.1", "--fake", "--noverbose",
              "--layers=3,2,1", "--mode=eval", "--tag=a", "--tag=b", "--seed=1", "--seed=2", "--w=0.5",
              "--opt=b", "--old_style=y", "positional", "--unknown_flag=1")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == repr(("/d", 5, 0.1, True, False, ["3", "2", "1"], "eval", ["a", "b"], [1, 2],
                                       [0.5], ["b"], "y", ["positional", "--unknown_flag=1"]))


def test_app_run_with_main_and_argv(tmp_path):
    out = run(tmp_path, "run_main")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == repr(("/tmp/data", 3, 0.5, False, True, ["8", "4"], "train", [], [], [], [],
                                       "x", ["rest"]))


def test_reading_a_flag_parses_sys_argv(tmp_path):
    out = run(tmp_path, "read", "--steps=7", "--fake")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "7 True"


def test_bad_flag_value_raises_from_app_run_as_tf(tmp_path):
    # TF's tolerant parser raises out of absl's run (a traceback, exit status 1), as here.
    out = run(tmp_path, "run", "--steps=many")
    assert out.returncode == 1
    assert "IllegalFlagValueError: flag --steps=many" in out.stderr


def test_old_keyword_names_warn_on_the_root_logger(tmp_path):
    out = run(tmp_path, "run_main")
    assert "WARNING:root:Use of the keyword argument names (flag_name, default_value, docstring) is deprecated" \
        in out.stderr


def test_reading_a_flag_with_an_unknown_one_in_argv_raises_as_absl(tmp_path):
    out = run(tmp_path, "read", "--steps=7", "--bogus=1")
    assert out.returncode == 1
    assert "UnrecognizedFlagError" in out.stderr and "bogus" in out.stderr
