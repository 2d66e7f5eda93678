"""The floor under the methods: what every method and set builds on, and no estimator.

Private package. Importing it imports none of its modules.

===================  ==========================================================
module               holds
===================  ==========================================================
``validate``         input checks at the public entry points (errors name the argument)
``cvxpy_forms``      every cvxpy formulation, one status map, one solve
``normalised``       the normalised, factored box slice every method sees, and its tolerances
``lifting``          the reduction of a bounded-error set to a box slice (the lifting)
===================  ==========================================================
"""
