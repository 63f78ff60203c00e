"""A seeded tf.image augmentation pipeline (convert_image_dtype, resize_images, random_flip_left_right,
random_crop, random_brightness, random_contrast, per_image_standardization) feeding a small model."""
import numpy as np

from tests.compat.programs import _data


def run(tf, workdir):
    tf.set_random_seed(6)
    images, labels = _data.digits(8)
    raw = tf.constant((images.reshape(8, 8, 8, 1) * 255).astype(np.uint8))
    label = tf.constant(labels)

    def augment(img):
        img = tf.image.convert_image_dtype(img, tf.float32)
        img = tf.image.resize_images(img, [12, 12])
        img = tf.image.random_flip_left_right(img, seed=1)
        img = tf.image.random_crop(img, [10, 10, 1], seed=2)
        img = tf.image.random_brightness(img, max_delta=0.2, seed=3)
        img = tf.image.random_contrast(img, 0.7, 1.3, seed=4)
        return tf.image.per_image_standardization(img)

    batch = tf.stack([augment(raw[i]) for i in range(8)])
    flat = tf.reshape(batch, [8, 100])
    logits = tf.layers.dense(flat, 10, kernel_initializer=tf.glorot_uniform_initializer(seed=7))
    loss = tf.losses.sparse_softmax_cross_entropy(label, logits)
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    back = tf.image.convert_image_dtype(tf.clip_by_value(batch * 0.2 + 0.5, 0.0, 1.0), tf.uint8)
    resized = tf.image.resize_images(raw[0], [16, 16], method=tf.image.ResizeMethod.NEAREST_NEIGHBOR)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first, first_u8, nn = sess.run([batch, back, resized])
        second = sess.run(batch)
        losses = [sess.run([train_op, loss])[1] for _ in range(5)]
    return {"first_batch": first, "second_batch": second, "first_uint8": first_u8, "nearest": nn,
            "losses": np.array(losses, np.float32)}
