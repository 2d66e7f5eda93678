"""The sets a user builds and asks for a center: the box slice, polytopes, quadratic sets.

===================  ==========================================================
module               holds
===================  ==========================================================
``box_slice``        :class:`BoxSlice` (slices and bounded-error rows in batches)
                     and :func:`chebyshev_center`
``polytope``         :class:`Polytope`, one set at a time
``quadratic``        :class:`QuadraticSet`, one set at a time
===================  ==========================================================
"""

from __future__ import annotations

from .box_slice import BoxSlice, chebyshev_center
from .polytope import Polytope
from .quadratic import QuadraticSet

__all__ = ["BoxSlice", "Polytope", "QuadraticSet", "chebyshev_center"]
