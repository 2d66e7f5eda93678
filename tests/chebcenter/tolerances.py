"""Per-route tolerances, with the reason for each (one table for the whole suite).

All comparisons are on problems scaled so that the box is [0, 1]^d or similar
(coordinates O(1)), so absolute tolerances are meaningful.
"""

TOL = {
    # closed forms against plain numpy: a few dozen flops per entry, rounding ~1e-15
    "closed_form": 1e-11,
    # identities of docs/theory.md §2 evaluated two ways (sums of N*d squares)
    "identity": 1e-10,
    # radius of exact vs SOCP optimal value
    "exact_radius_vs_socp": 2e-6,
    # vertices: enumeration vs brute force, both from LU solves of O(1)-conditioned bases
    "vertex": 1e-8,
    # RCC1 center from the dual vs the primal SDP: interior-point accuracy ~1e-8 in the
    # objective, the center is the square root of that sensitivity -> 1e-4
    "rcc1_primal_dual": 1e-4,
    # relaxation ordering r^2 <= eta1 <= eta2 <= R^2 with solver slack (relative)
    "ordering": 1e-6,
    # membership in S_F: residual and box violation
    "membership": 1e-8,
}
