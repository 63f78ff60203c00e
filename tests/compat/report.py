"""Prints, for each compatibility program, whether it runs under tensorweave with TensorFlow's
numbers, and why not. From the repository root:  python -m tests.compat.report [names]"""
import sys
import tempfile

import tensorweave as tf
from tests.compat import harness
from tests.compat.programs import PROGRAMS


def check(name, expected):
    tf.reset_default_graph()
    with tempfile.TemporaryDirectory() as workdir:
        try:
            harness.compare(name, harness.run_program(tf, name, workdir), expected[name])
        except Exception as e:  # the report names any failure, the test raises it
            first = str(e).strip().splitlines()
            return "FAIL", "%s: %s" % (type(e).__name__, first[0] if first else "")
    return "PASS", ""


def main(names):
    expected, _ = harness.load_expected()
    passed = 0
    for name in names or PROGRAMS:
        status, why = check(name, expected)
        passed += status == "PASS"
        print("%-28s %s %s" % (name, status, why), flush=True)
    print("%d of %d programs pass" % (passed, len(names or PROGRAMS)))


if __name__ == "__main__":
    main(sys.argv[1:])
