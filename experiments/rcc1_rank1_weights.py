"""The structure of RCC1's optimal weights at rank 1 (docs/theory.md §1.2, "The weights at rank 1").

For d = 3, 4, 6, 10: 10 random rank-1 slices of the unit box, 400 planted records each,
``rcc1`` with ``fast_path=False`` (the barrier on every row). Prints, per d, how many optimal
weights differ from 1 and whether, on the rows where every weight does,
``alpha_i = 1 + nu |a_i| / sqrt(x_i (1 - x_i))`` for one scalar ``nu`` on all coordinates but
one (x the RCC1 center): the relative spread of ``nu`` over the best choice of the excepted
coordinate.

    python experiments/rcc1_rank1_weights.py
"""

from __future__ import annotations

import numpy as np

import chebcenter as cc


def main() -> None:
    for d in (3, 4, 6, 10):
        rng = np.random.default_rng(d)
        optimal = below = off_rows = all_off = 0
        spreads = []
        for _ in range(10):
            A = rng.standard_normal((1, d))
            B = rng.random((400, d)) @ A.T
            r = cc.BoxSlice(A).centers(B, "rcc1", fast_path=False)
            for k in range(B.shape[0]):
                if r.status[k] is not cc.Status.OPTIMAL:
                    continue
                optimal += 1
                a, x = r.extras["alpha"][k], r.centers[k]
                below += int(np.sum(a < 1 - 1e-6))
                off = np.abs(a - 1) > 1e-5
                off_rows += bool(off.any())
                if off.all():
                    all_off += 1
                    nu = (a - 1) * np.sqrt(x * (1 - x)) / np.abs(A[0])
                    spreads.append(min((np.ptp(np.delete(nu, j)) / np.abs(np.delete(nu, j)).max()) for j in range(d)))
        s = np.array(spreads) if spreads else np.zeros(1)
        print(f"d = {d}: {optimal} optimal rows; weights below 1: {below}; rows with a weight off 1: {off_rows}; "
              f"with every weight off 1: {all_off}, nu's relative spread on all but one coordinate: "
              f"median {np.median(s):.1e}, max {s.max():.1e}")


if __name__ == "__main__":
    main()
