"""Writes tests/data/tw_registered_ops.json: the op types tensorweave registers (run with
tensorweave's venv). make_tf_op_graphs_fixtures.py, under TF's venv, reads it to know which
ops to build TF GraphDefs for."""
import json
import os

from tensorweave.framework.op_def import registered_ops

HERE = os.path.dirname(os.path.abspath(__file__))

if __name__ == "__main__":
    with open(os.path.join(HERE, "tw_registered_ops.json"), "w") as f:
        json.dump(sorted(registered_ops()), f, indent=0)
        f.write("\n")
