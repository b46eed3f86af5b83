"""Assertions shared by the test modules."""

import numpy as np


def assert_same_training(got, expected):
    """Scores of two fits that differ only in the order of floating-point
    sums (sparse vs dense products, rows of equal label swapped, queries
    summed in another order).

    Each score is exact to a few ulps (~1e-15 relative) per step, but every
    optimizer step passes the difference on, and over the tens of steps of
    these fits a network amplifies it by orders of magnitude (1e-10 was seen
    with another numpy build). 1e-6 of the scores' spread leaves four more
    orders of margin, while a real difference (a lost row, a query split in
    two, a wrong gradient) moves scores by more than 1e-3 of their spread.
    """
    scale = float(np.ptp(expected)) or 1.0
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-6 * scale)
