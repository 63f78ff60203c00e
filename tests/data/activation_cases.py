"""The float inputs on which tanh, sigmoid and their gradient kernels are compared with TF, built by
formula (no random generator) so that make_tf_activation_fixtures.py and
tests/ops/math/test_activation_rounding.py agree on them without storing them."""
import numpy as np

# Points where TF's kernels change behaviour (Eigen's clamps and cut-offs), and special values.
_SPECIALS = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1.1754942e-38, -1.1754942e-38, 1.1754944e-38,
             0.0004, -0.0004, 0.00039999, 1.25, -1.25, 7.90531110763549805, 7.90738964080810547,
             7.99881172180175781, 8.01773357391357422, 9.0, -9.0, 9.5, -9.5, 10.0, -10.0, 15.6437711715698242,
             15.7243833541870117, 16.6355324, -16.6355324, 18.0, -18.0, 20.0, -20.0, 80.0, -80.0, 88.72, -88.72,
             89.0, -89.0, 104.0, -104.0, 3.4028235e38, -3.4028235e38]


def float32_inputs() -> np.ndarray:
    """~100,000 float32 values: every 71,583rd bit pattern (all magnitudes from denormals to NaN,
    both signs), a dense grid over [-20, 20], the values near each clamp, and the specials."""
    patterns = (np.arange(60_000, dtype=np.uint64) * 71_583).astype(np.uint32).view(np.float32)
    grid = np.linspace(-20.0, 20.0, 36_001, dtype=np.float32)
    near = []
    for c in (0.0004, 1.25, 7.9053111, 7.9073896, 7.9988117, 8.0177336, 9.0, 15.643771, 15.724383, 16.635532, 18.0):
        base = np.float32(c)
        steps = np.arange(-200, 201, dtype=np.int64)
        around = (base.view(np.int32).astype(np.int64) + steps).astype(np.int32).view(np.float32)
        near.extend([around, -around])
    return np.concatenate([patterns, grid, *near, np.array(_SPECIALS, np.float32)])


def float64_inputs() -> np.ndarray:
    """~30,000 float64 values the same way (bit patterns, a grid, specials)."""
    patterns = (np.arange(20_000, dtype=np.uint64) * np.uint64(922_337_203_685_477)).view(np.float64)
    grid = np.linspace(-40.0, 40.0, 10_001)
    return np.concatenate([patterns, grid, np.array(_SPECIALS, np.float64)])


def grad_inputs(dtype) -> tuple[np.ndarray, np.ndarray]:
    """(y, dy) pairs for TanhGrad and SigmoidGrad: y over [-1, 1] and the specials, dy varied."""
    y = np.concatenate([np.linspace(-1.0, 1.0, 20_001), [0.0, -0.0, 1.0, -1.0, np.nan, np.inf, 1e-30]]).astype(dtype)
    dy = np.resize(np.array([1.0, -0.5, 3.25, 1e-3, 7.0, -2.0, 0.1], dtype), y.shape)
    return y, dy
