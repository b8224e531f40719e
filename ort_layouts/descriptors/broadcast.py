"""ONNX's multidirectional broadcasting of two shapes (Expand's rule, numpy's too): the sizes
right-aligned, the shorter shape taking leading 1s, each pair of sizes equal or one of them 1.

The one spelling of the rule: Expand's case check and output shape and the descriptor's
``broadcast_to`` ask these functions, each raising its own error with its own message.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

__all__ = ["broadcast_conflict", "broadcast_shape"]


def _aligned(a: Sequence[int], b: Sequence[int]) -> Iterator[tuple[int, int]]:
    """The pairs of sizes, right-aligned, leading 1s added to the shorter shape."""
    rank = max(len(a), len(b))
    return zip((1,) * (rank - len(a)) + tuple(a), (1,) * (rank - len(b)) + tuple(b), strict=True)


def _pair(m: int, n: int) -> int | None:
    """The rule for one pair of sizes: the size they broadcast to (the one that is not 1; a 1
    against a 0 gives 0), None when they differ and neither is 1."""
    if m == n or n == 1:
        return m
    return n if m == 1 else None


def broadcast_shape(a: Sequence[int], b: Sequence[int]) -> tuple[int, ...] | None:
    """The shape two shapes broadcast to: along each axis the size that is not 1 (a 1 against
    a 0 gives 0); None when a pair of sizes differs and neither is 1 (:func:`broadcast_conflict`
    names it).

    >>> broadcast_shape((2, 1, 4), (3, 1))
    (2, 3, 4)
    >>> broadcast_shape((2, 3), (4,)) is None
    True
    """
    out = []
    for m, n in _aligned(a, b):
        size = _pair(m, n)
        if size is None:
            return None
        out.append(size)
    return tuple(out)


def broadcast_conflict(a: Sequence[int], b: Sequence[int]) -> tuple[int, int, int] | None:
    """The first pair of sizes that does not broadcast (:func:`broadcast_shape`): ``(axis, size
    in a, size in b)``, the axis counted in the broadcast's rank; None when the shapes broadcast.

    >>> broadcast_conflict((2, 3, 4), (5, 4))
    (1, 3, 5)
    """
    for axis, (m, n) in enumerate(_aligned(a, b)):
        if _pair(m, n) is None:
            return axis, m, n
    return None
