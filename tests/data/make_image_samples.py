"""Writes the BMP and GIF sample files (image_sample.bmp, image_sample.gif) that
make_tf_image_fixtures.py has TensorFlow decode: TF has no BMP or GIF encoder, so Pillow (which
comes with tensorboard) writes them. Run with the project's Python:
    /work/main/.venv/bin/python tests/data/make_image_samples.py
"""
import os

import numpy as np
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    rng = np.random.RandomState(11)
    rgb = rng.randint(0, 256, (6, 9, 3)).astype(np.uint8)
    Image.fromarray(rgb).save(os.path.join(HERE, "image_sample.bmp"), "BMP")
    # A two-frame GIF over an 8-colour palette, so no frame is quantised.
    palette = rng.randint(0, 256, (8, 3)).astype(np.uint8)
    frames = [Image.fromarray(palette[rng.randint(0, 8, (5, 7))]) for _ in range(2)]
    frames[0].save(os.path.join(HERE, "image_sample.gif"), "GIF", save_all=True, append_images=frames[1:],
                   duration=50, loop=0, disposal=1, optimize=False)


if __name__ == "__main__":
    main()
