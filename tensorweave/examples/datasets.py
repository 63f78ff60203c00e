"""Handwritten-digit data for the examples: the UCI 8x8 digits shipped with the package (see
data/README.md), or real MNIST from IDX files in a directory (`--data-dir`)."""
from __future__ import annotations

import gzip
import os
from dataclasses import dataclass
from typing import Optional

import numpy as np

_DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


@dataclass
class DataSet:
    train_images: np.ndarray   # float32 [n, height * width], values in [0, 1]
    train_labels: np.ndarray   # int64 [n]
    test_images: np.ndarray
    test_labels: np.ndarray
    height: int
    width: int
    name: str

    @property
    def num_pixels(self) -> int:
        return self.height * self.width


def load_digits(test_fraction: float = 0.2, seed: int = 0) -> DataSet:
    """The 1797 UCI digits (8x8, 0..16), scaled to [0, 1], split with a fixed permutation."""
    with gzip.open(os.path.join(_DATA_DIR, "digits.csv.gz"), "rt") as f:
        table = np.loadtxt(f, delimiter=",", dtype=np.float32)
    images, labels = table[:, :-1] / 16.0, table[:, -1].astype(np.int64)
    order = np.random.RandomState(seed).permutation(len(labels))
    n_test = int(np.ceil(len(labels) * test_fraction))  # 360 of 1797, as scikit-learn splits
    test, train = order[:n_test], order[n_test:]
    return DataSet(images[train], labels[train], images[test], labels[test], 8, 8, "UCI digits (8x8)")


def _open(path: str) -> "gzip.GzipFile | object":
    return gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb")


def _find(data_dir: str, stem: str) -> str:
    for name in (stem, stem + ".gz", stem.replace("-idx", ".idx"), stem.replace("-idx", ".idx") + ".gz"):
        path = os.path.join(data_dir, name)
        if os.path.exists(path):
            return path
    raise FileNotFoundError(f"{stem}(.gz) not found in {data_dir}")


def read_idx(path: str) -> np.ndarray:
    """An IDX file (the MNIST format): magic (0, 0, type 0x08, ndim), big-endian dims, uint8 data."""
    with _open(path) as f:
        raw = f.read()  # type: ignore[attr-defined]
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] != 0x08:
        raise ValueError(f"{path} is not an unsigned-byte IDX file")
    ndim = raw[3]
    dims = np.frombuffer(raw, dtype=">u4", count=ndim, offset=4).astype(np.int64)
    data = np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim)
    if data.size != int(np.prod(dims)):
        raise ValueError(f"{path}: header says {dims.tolist()} but holds {data.size} values")
    return data.reshape(dims)


def load_mnist(data_dir: str) -> DataSet:
    train_x = read_idx(_find(data_dir, "train-images-idx3-ubyte"))
    train_y = read_idx(_find(data_dir, "train-labels-idx1-ubyte"))
    test_x = read_idx(_find(data_dir, "t10k-images-idx3-ubyte"))
    test_y = read_idx(_find(data_dir, "t10k-labels-idx1-ubyte"))
    h, w = train_x.shape[1:]
    return DataSet(train_x.reshape(len(train_x), -1).astype(np.float32) / 255.0, train_y.astype(np.int64),
                   test_x.reshape(len(test_x), -1).astype(np.float32) / 255.0, test_y.astype(np.int64),
                   h, w, "MNIST")


def load(data_dir: Optional[str] = None) -> DataSet:
    return load_mnist(data_dir) if data_dir else load_digits()


def one_hot(labels: np.ndarray, depth: int = 10) -> np.ndarray:
    out = np.zeros((len(labels), depth), dtype=np.float32)
    out[np.arange(len(labels)), labels] = 1.0
    return out


class BatchIterator:
    """Shuffled minibatches, reshuffled each epoch, from a fixed seed."""

    def __init__(self, images: np.ndarray, labels: np.ndarray, batch_size: int, seed: int) -> None:
        self.images, self.labels, self.batch_size = images, labels, batch_size
        self.rng = np.random.RandomState(seed)
        self.order = self.rng.permutation(len(labels))
        self.pos = 0

    def next(self) -> tuple[np.ndarray, np.ndarray]:
        if self.pos + self.batch_size > len(self.order):
            self.order = self.rng.permutation(len(self.labels))
            self.pos = 0
        idx = self.order[self.pos:self.pos + self.batch_size]
        self.pos += self.batch_size
        return self.images[idx], self.labels[idx]
