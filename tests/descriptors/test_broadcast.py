"""The broadcast rule (``descriptors/broadcast.py``) against numpy's, on many random shapes."""

from __future__ import annotations

import numpy as np

from ort_layouts.descriptors.broadcast import broadcast_conflict, broadcast_shape


def _numpy_conflict(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, int, int] | None:
    """The first pair of sizes, right-aligned, that numpy refuses to broadcast on its own."""
    rank = max(len(a), len(b))
    pa, pb = (1,) * (rank - len(a)) + a, (1,) * (rank - len(b)) + b
    for axis, (m, n) in enumerate(zip(pa, pb, strict=True)):
        try:
            np.broadcast_shapes((m,), (n,))
        except ValueError:
            return axis, m, n
    return None


def test_random_shapes_broadcast_and_conflict_as_numpy_says() -> None:
    rng = np.random.default_rng(20240611)
    conflicts = 0
    for _ in range(5000):
        a, b = (tuple(int(n) for n in rng.integers(0, 4, size=rng.integers(0, 7))) for _ in range(2))
        try:
            want: tuple[int, ...] | None = np.broadcast_shapes(a, b)
        except ValueError:
            want = None
        assert broadcast_shape(a, b) == want, (a, b)
        conflict = broadcast_conflict(a, b)
        assert (conflict is None) == (want is not None), (a, b)
        assert conflict == _numpy_conflict(a, b), (a, b)
        conflicts += conflict is not None
    assert 1000 < conflicts < 4000  # both outcomes drawn often
