"""A small convolutional network trained like the main job (white paper Figure 10's kind of
model, scaled to the data): conv-relu-maxpool twice, a fully connected layer and a softmax.

    python -m tensorweave.examples.cnn [--steps N] [--batch-size B] [--learning-rate LR]
                                       [--optimizer ...] [--data-dir DIR]"""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

import tensorweave as tf
from tensorweave.examples.mnist import OPTIMIZERS, run


def conv_layer(x: tf.Tensor, size: int, channels_in: int, channels_out: int, name: str) -> tf.Tensor:
    with tf.variable_scope(name):
        w = tf.get_variable("weights", [size, size, channels_in, channels_out],
                            initializer=tf.glorot_uniform_initializer())
        b = tf.get_variable("biases", [channels_out], initializer=tf.zeros_initializer())
        conv = tf.nn.conv2d(x, w, strides=[1, 1, 1, 1], padding="SAME")
        relu = tf.nn.relu(tf.nn.bias_add(conv, b))
        return tf.nn.max_pool(relu, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="SAME")


def build_model(height: int, width: int, optimizer: str, learning_rate: float) -> dict:
    x = tf.placeholder(tf.float32, [None, height * width])
    y = tf.placeholder(tf.float32, [None, 10])
    image = tf.reshape(x, [-1, height, width, 1])
    size = 5 if height >= 16 else 3
    c1, c2 = (32, 64) if height >= 16 else (16, 32)
    pool2 = conv_layer(conv_layer(image, size, 1, c1, "conv1"), size, c1, c2, "conv2")
    flat_size = int(np.prod(pool2.shape.as_list()[1:]))
    flat = tf.reshape(pool2, [-1, flat_size])
    with tf.variable_scope("fc1"):
        w = tf.get_variable("weights", [flat_size, 256])
        b = tf.get_variable("biases", [256], initializer=tf.zeros_initializer())
        fc1 = tf.nn.relu(tf.matmul(flat, w) + b)
    with tf.variable_scope("fc2"):
        w = tf.get_variable("weights", [256, 10])
        b = tf.get_variable("biases", [10], initializer=tf.zeros_initializer())
        logits = tf.matmul(fc1, w) + b
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=logits))
    train_op = OPTIMIZERS[optimizer](learning_rate).minimize(loss, global_step=tf.train.get_global_step())
    accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), tf.argmax(y, 1)), tf.float32))
    return {"x": x, "y": y, "loss": loss, "train_op": train_op, "accuracy": accuracy}


def main(argv: Optional[Sequence[str]] = None) -> Optional[float]:
    return run(argv, lambda args, data: build_model(data.height, data.width, args.optimizer, args.learning_rate),
               program="tensorweave.examples.cnn")


if __name__ == "__main__":
    main()
