"""The compiled kernels (numba), one module per kind of computation.

Private package: float64 arrays in and out, no validation, no Python objects; each
docstring states the formula it evaluates (notation as in docs/theory.md). Importing a
module compiles nothing: a kernel compiles on its first call, or from
``python -m chebcenter warmup``.

===================  ===========================================================
module               holds
===================  ===========================================================
``linalg``           per-row products in a fixed order, Cholesky, stable argsorts
``closed_forms``     ``q = A^+ b``, half*, residuals, box violations, ball radii
``projection``       the Euclidean projection onto S_F (dual Newton), emptiness
``vertices``         vertex enumeration basis by basis, de-duplication
``edge_walk``        vertex enumeration by walking the edges from one vertex
``ball``             the minimum enclosing ball, certified both ways
``simplex``          the bounded-variable simplex (feature ranges, node LPs)
``bnb``              the branch and bound's compiled search (rank-1 knapsack, DFS)
``rcc1``             the RCC1 barrier (dual Newton on the weights)
``rcc1_certificate`` the RCC1 bound for any weights, verified under rounding
``nnls``             non-negative least squares (rcc1's start)
``bvls``             bounded-variable least squares (cls)
``qp``               the metric projection's active-set QP (project)
``intervals``        the box-slice kernels row by row with a box per row (interval sets)
===================  ===========================================================
"""
