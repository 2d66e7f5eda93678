"""The compiled kernels (numba), one module per kind of computation.

Private package: float64 arrays in and out, no validation, no Python objects; each
docstring states the formula it evaluates (notation as in docs/theory.md). Importing a
module compiles nothing: a kernel compiles on its first call, or from
``python -m chebcenter warmup``.

===================  ===========================================================
module               holds
===================  ===========================================================
``jit``              the one numba decorator of every kernel (cached, ``nogil``), lazy compiles
``parallel``         a batch's rows cut into blocks, one per thread (the kernels release the GIL)
``linalg``           per-row products in a fixed order, Cholesky, stable argsorts; ``EPS`` and
                     the numerical rank rule every module uses
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
``interval_rows``    the box-slice kernels row by row with a box per row (interval sets)
``rcc2_intervals``   rcc2 on bounded-error sets without equations (dual coordinate ascent)
``cuts``             vertex enumeration of a box cut by half-spaces, in x (double description)
``batch_tables``     exact's batch route: the basis tables shared by a batch, the candidates
``batch_exact``      exact over a batch of right-hand sides sharing A
``batch_slab``       exact over a batch of slabs ``l <= a^T x <= u`` sharing a and the box
===================  ===========================================================
"""
