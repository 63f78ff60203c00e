"""The main job: the OSDI'16 paper's Figure 1 program, training a 2-layer network on real
handwritten digits.

    python -m tensorweave.examples.mnist [--steps N] [--batch-size B] [--learning-rate LR]
                                         [--optimizer adagrad|sgd|momentum|adam|rmsprop]
                                         [--data-dir DIR_WITH_MNIST_IDX_FILES]
                                         [--logdir DIR] [--summary-every N]
                                         [--cluster local:P,W | --cluster JSON --job NAME --task K]

Without --data-dir it uses the UCI 8x8 digits shipped in the package; with it, the real MNIST
IDX files (train-images-idx3-ubyte[.gz] and friends). Loss and accuracy summaries and the graph go
to --logdir (default ./logs/mnist; an empty value writes nothing) for TensorBoard.

With --cluster local:P,W the job runs on a cluster of processes on this machine (P parameter
servers, W workers; examples/cluster_launcher.py), with a JSON cluster (or TF_CONFIG) as one task
of a real cluster (examples/cluster_task.py): between-graph replication, asynchronous SGD."""
from __future__ import annotations

import argparse
import os
import sys
from typing import Callable, Optional, Sequence

import numpy as np
from tqdm import tqdm

import tensorweave as tf
from tensorweave.examples import cluster_launcher, cluster_task, datasets

OPTIMIZERS = {
    "adagrad": lambda lr: tf.train.AdagradOptimizer(lr),
    "sgd": lambda lr: tf.train.GradientDescentOptimizer(lr),
    "momentum": lambda lr: tf.train.MomentumOptimizer(lr, 0.9),
    "adam": lambda lr: tf.train.AdamOptimizer(lr),
    "rmsprop": lambda lr: tf.train.RMSPropOptimizer(lr),
}


def parse_args(argv: Optional[Sequence[str]]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=3000)
    p.add_argument("--batch-size", type=int, default=100)
    p.add_argument("--learning-rate", type=float, default=0.1)
    p.add_argument("--optimizer", choices=sorted(OPTIMIZERS), default="adagrad")
    p.add_argument("--hidden", type=int, default=100)
    p.add_argument("--data-dir", default=None, help="directory with the MNIST IDX files")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--logdir", default=os.path.join("logs", "mnist"),
                   help="where TensorBoard summaries go ('' for none)")
    p.add_argument("--summary-every", type=int, default=10, help="steps between summaries")
    p.add_argument("--cluster", default=None,
                   help="local:P,W (P ps and W worker processes here) or a cluster's JSON "
                        "(default: TF_CONFIG's, if set)")
    p.add_argument("--job", default=None, help="with a JSON cluster: this task's job (ps, worker, chief)")
    p.add_argument("--task", type=int, default=None, help="with a JSON cluster: this task's index")
    return p.parse_args(argv)


def build_model(num_pixels: int, hidden: int, optimizer: str, learning_rate: float) -> dict:
    """Figure 1 of the OSDI paper (the initial weights are scaled so that SGD-family optimizers
    train well from the first step; the paper's figure leaves this detail out)."""
    x = tf.placeholder(tf.float32, [None, num_pixels])   # Placeholder for input.
    y = tf.placeholder(tf.float32, [None, 10])           # Placeholder for labels.
    scale1, scale2 = np.sqrt(6.0 / (num_pixels + hidden)), np.sqrt(6.0 / (hidden + 10))
    W_1 = tf.Variable(tf.random_uniform([num_pixels, hidden], -scale1, scale1))  # noqa: N806
    b_1 = tf.Variable(tf.zeros([hidden]))
    layer_1 = tf.nn.relu(tf.matmul(x, W_1) + b_1)        # Output of hidden layer.
    W_2 = tf.Variable(tf.random_uniform([hidden, 10], -scale2, scale2))  # noqa: N806
    b_2 = tf.Variable(tf.zeros([10]))
    layer_2 = tf.matmul(layer_1, W_2) + b_2              # Output of linear layer.
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(layer_2, y))
    train_op = OPTIMIZERS[optimizer](learning_rate).minimize(loss, global_step=tf.train.get_global_step())
    correct = tf.equal(tf.argmax(layer_2, 1), tf.argmax(y, 1))
    accuracy = tf.reduce_mean(tf.cast(correct, tf.float32))
    tf.summary.scalar("loss", loss)
    tf.summary.scalar("accuracy", accuracy)
    return {"x": x, "y": y, "loss": loss, "train_op": train_op, "accuracy": accuracy}


def train(args: argparse.Namespace, data: datasets.DataSet, model: dict) -> float:
    batches = datasets.BatchIterator(data.train_images, data.train_labels, args.batch_size, args.seed)
    x, y = model["x"], model["y"]
    summaries = tf.summary.merge_all() if args.logdir else None
    with tf.Session() as sess:
        writer = tf.summary.FileWriter(args.logdir, sess.graph) if summaries is not None else None
        sess.run(tf.initialize_all_variables())          # Randomly initialize weights.
        progress = tqdm(range(args.steps), desc="training", unit="step", disable=args.quiet,
                        file=sys.stdout, mininterval=0.2)
        running = None
        for step in progress:                            # Train iteratively for NUM_STEPS.
            images, labels = batches.next()              # Load one batch of input data.
            feed = {x: images, y: datasets.one_hot(labels)}
            if writer is not None and step % args.summary_every == 0:
                if step == args.summary_every:  # one traced step: per-node time and memory in the graph tab
                    meta = tf.RunMetadata()
                    _, loss, summary = sess.run([model["train_op"], model["loss"], summaries], feed,
                                                options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                                                run_metadata=meta)
                    writer.add_run_metadata(meta, f"step{step}", step)
                else:
                    _, loss, summary = sess.run([model["train_op"], model["loss"], summaries], feed)
                writer.add_summary(summary, step)      # written by the writer's own thread
            else:
                _, loss = sess.run([model["train_op"], model["loss"]], feed)  # Perform a step.
            running = loss if running is None else 0.95 * running + 0.05 * loss
            if step % 20 == 0:  # shown at the bar's next refresh, with the right step count
                progress.set_postfix(loss=f"{running:.4f}", refresh=False)
        progress.close()
        accuracy = float(sess.run(model["accuracy"], {x: data.test_images, y: datasets.one_hot(data.test_labels)}))
        if writer is not None:
            writer.close()
        return accuracy


def run(argv: Optional[Sequence[str]], build: Callable[[argparse.Namespace, datasets.DataSet], dict],
        program: str = "tensorweave.examples.mnist") -> Optional[float]:
    """Loads the data, builds the model with `build(args, data)` in a fresh graph, trains it and
    prints the test accuracy (shared by the examples; `program` is the module that cluster
    workers run). On a cluster, the chief returns the accuracy, the other tasks None."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)
    if args.cluster is not None and args.cluster.startswith("local:"):
        status = cluster_launcher.launch_local(args.cluster, program, argv, args.logdir)
        if status:
            raise SystemExit(status)
        return None
    try:
        task = cluster_task.resolve(args)
    except (ValueError, TypeError) as err:
        raise SystemExit(f"{program}: {err}") from None
    if task is not None and task[1] == "ps":
        cluster_task.serve(*task)
        return None
    data = datasets.load(args.data_dir)
    if task is None or cluster_task.is_chief(*task):
        print(f"data: {data.name}: {len(data.train_labels)} training and {len(data.test_labels)} test images "
              f"of {data.height}x{data.width}")
    tf.reset_default_graph()
    tf.set_random_seed(args.seed)
    if task is None:
        accuracy: Optional[float] = train(args, data, build(args, data))
    else:
        accuracy = cluster_task.train(args, data, build, *task)
        if accuracy is None:
            return None
    print(f"test accuracy: {accuracy:.4f}")
    if args.logdir:
        print(f"summaries: tensorboard --logdir {os.path.abspath(args.logdir)}")
    return accuracy


def main(argv: Optional[Sequence[str]] = None) -> Optional[float]:
    return run(argv, lambda args, data: build_model(data.num_pixels, args.hidden, args.optimizer,
                                                    args.learning_rate))


def cli() -> None:
    """Console entry point (`tensorweave`): exit status 0 on success."""
    main()


if __name__ == "__main__":
    cli()
