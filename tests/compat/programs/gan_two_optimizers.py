"""A GAN-style program: generator and discriminator in their own variable scopes, the discriminator
applied twice with reuse, two Adam optimizers each restricted by var_list to its scope's
trainable variables."""
import numpy as np


def run(tf, workdir):
    tf.set_random_seed(18)
    rng = np.random.RandomState(7)
    real_data = (rng.randn(64, 2) * 0.5 + [2.0, -1.0]).astype(np.float32)

    def generator(z):
        with tf.variable_scope("generator"):
            h = tf.layers.dense(z, 16, activation=tf.nn.leaky_relu)
            return tf.layers.dense(h, 2)

    def discriminator(x, reuse=False):
        with tf.variable_scope("discriminator", reuse=reuse):
            h = tf.layers.dense(x, 16, activation=tf.nn.relu)
            return tf.layers.dense(h, 1)

    z = tf.placeholder(tf.float32, [None, 4])
    x = tf.placeholder(tf.float32, [None, 2])
    fake = generator(z)
    d_real = discriminator(x)
    d_fake = discriminator(fake, reuse=True)
    d_loss = tf.reduce_mean(
        tf.nn.sigmoid_cross_entropy_with_logits(logits=d_real, labels=tf.ones_like(d_real))
        + tf.nn.sigmoid_cross_entropy_with_logits(logits=d_fake, labels=tf.zeros_like(d_fake)))
    g_loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(logits=d_fake, labels=tf.ones_like(d_fake)))
    d_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope="discriminator")
    g_vars = [v for v in tf.trainable_variables() if v.name.startswith("generator/")]
    d_train = tf.train.AdamOptimizer(0.002, beta1=0.5).minimize(d_loss, var_list=d_vars)
    g_train = tf.train.AdamOptimizer(0.002, beta1=0.5).minimize(g_loss, var_list=g_vars)
    d_losses, g_losses = [], []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for step in range(8):
            zs = rng.uniform(-1, 1, (32, 4)).astype(np.float32)
            batch = real_data[(step % 2) * 32:(step % 2) * 32 + 32]
            _, dl = sess.run([d_train, d_loss], {x: batch, z: zs})
            _, gl = sess.run([g_train, g_loss], {z: zs})
            d_losses.append(dl)
            g_losses.append(gl)
        samples = sess.run(fake, {z: np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)})
    return {"d_losses": np.array(d_losses, np.float32), "g_losses": np.array(g_losses, np.float32),
            "samples": samples, "d_vars": np.array([v.name for v in d_vars]),
            "g_vars": np.array([v.name for v in g_vars]),
            "all_vars": np.array(sorted(v.name for v in tf.global_variables()))}
