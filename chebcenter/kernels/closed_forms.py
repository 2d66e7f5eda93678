"""Compiled closed forms: ``q = A^+ b``, ``h = q + P m`` (half*), residuals, box violations
and the radius of the ball about a point of the box.

Private. Notation as in docs/theory.md: ``m = (lo + hi) / 2``, ``Vr`` the r x d matrix with
orthonormal rows spanning Row(A), so that ``A x = b  <=>  Vr x = Vr q`` for consistent ``b``."""

from __future__ import annotations

import math

import numpy as np

from .jit import jit
from .linalg import residual_norm

__all__ = ["ball_radii", "box_violation", "check_rows", "forward_rows", "prepare_rows"]


@jit
def prepare_rows(B, Ur, s_r, Vr, p_mid, lo, hi, Q, H, residual, violation):
    """Per row n, from the thin SVD ``A = Ur diag(s_r) Vr``: ``c = Ur^T b_n``,
    ``res = ||b_n - Ur c||`` (the distance of b_n to Col(A)), ``q = Vr^T (c / s_r) = A^+ b_n``,
    ``h = q + P m``, ``viol = max_i max(lo_i - h_i, h_i - hi_i, 0)``.

    Backward stable: only orthogonal factors touch b (no explicit pseudo-inverse, whose
    entries of size 1/s_min would smear rounding over every coordinate), so the residual
    is accurate to about eps ||b|| whatever the condition number of A.
    Writes ``Q[n] = q``, ``H[n] = h``, ``residual[n]``, ``violation[n]``.
    """
    n_rows, m = B.shape
    r, d = Vr.shape
    c = np.empty(r)
    for n in range(n_rows):
        b = B[n]
        for k in range(r):
            s = 0.0
            for j in range(m):
                s += Ur[j, k] * b[j]
            c[k] = s
        residual[n] = residual_norm(Ur, b, c)  # ||b - Ur c||
        q = Q[n]
        for i in range(d):
            q[i] = 0.0
        for k in range(r):
            ck = c[k] / s_r[k]
            row = Vr[k]
            for i in range(d):
                q[i] += row[i] * ck
        for i in range(d):
            H[n, i] = q[i] + p_mid[i]
        violation[n] = box_violation(H[n], lo, hi)


@jit
def check_rows(C, A, B, lo, hi, residual, violation):
    """Per row n: ``residual[n] = ||A c_n - b_n||``, ``violation[n] = max_i max(lo_i - c_i,
    c_i - hi_i, 0)``; rows with a NaN center are left untouched."""
    n_rows, d = C.shape
    m = A.shape[0]
    for n in range(n_rows):
        if math.isnan(C[n, 0]):
            continue
        res = 0.0
        for k in range(m):
            s = -B[n, k]
            for i in range(d):
                s += A[k, i] * C[n, i]
            res += s * s
        residual[n] = math.sqrt(res)
        violation[n] = box_violation(C[n], lo, hi)


@jit
def box_violation(x, lo, hi):
    """``max_i max(lo_i - x_i, x_i - hi_i, 0)``: how far x lies outside the box."""
    worst = 0.0
    for i in range(x.size):
        if lo[i] - x[i] > worst:
            worst = lo[i] - x[i]
        if x[i] - hi[i] > worst:
            worst = x[i] - hi[i]
    return worst


@jit
def ball_radii(H, mid, half_diag_sq, out):
    """``R_n = sqrt(max(0, sum_i ((hi_i - lo_i)/2)^2 - ||h_n - m||^2))`` (docs/theory.md §2.4)."""
    n_rows, d = H.shape
    for n in range(n_rows):
        s = 0.0
        for i in range(d):
            t = H[n, i] - mid[i]
            s += t * t
        out[n] = math.sqrt(max(0.0, half_diag_sq - s))


@jit
def forward_rows(B, Q, user, slack, Ur, s_r, Vr, A_abs_hi, sigma_max, H, residual_term, lo, hi, local, e_out):
    """Per slice row n, the forward error of docs/theory.md §6.8: ``e_out[n]``.

    ``eta = (||zeta|| + err(zeta) + 1.01 ||t|| + residual_term) / s_min`` with
    ``zeta = Ur^T b - s_r (Vr q)``, ``err(zeta) = (m + d + 2) eps sqrt(r) (||b|| + sigma_max ||q||)``
    (``|| |b| |Ur| || <= ||Ur||_F ||b||``), ``t_j = (2d + 4) eps (max(user_j, |b_j|) + A_abs_hi_j)
    + slack_j`` (``user``/``slack`` may have no rows: none); ``e = 1.01 H eta``. With ``local``
    (the box's midpoint is the origin, so half* is ``q`` itself), where q keeps a slack
    ``delta > r_q`` from the box's faces (``r_q = 2 (d + 2) eps sqrt(r) ||q||`` bounds its
    distance from the plane ``Vr x = fl(Vr q)``), the smaller local bound
    ``1.01 (eta + lam (far_q + r_q + eta))``, ``lam = eta / (eta + delta - r_q)``, far_q the
    farthest box corner from q. One row at a time, sums in index order."""
    n_rows, m = B.shape
    r, d = Vr.shape
    eps = 2.220446049250313e-16
    s_min = s_r[r - 1]
    has_user = user.shape[0] > 0
    has_slack = slack.shape[0] > 0
    root_r = math.sqrt(r)
    for n in range(n_rows):
        z2 = 0.0
        for k in range(r):
            sq = 0.0
            for i in range(d):
                sq += Vr[k, i] * Q[n, i]
            sb = 0.0
            for j in range(m):
                sb += Ur[j, k] * B[n, j]
            z = sb - s_r[k] * sq
            z2 += z * z
        b2 = 0.0
        t2 = 0.0
        for j in range(m):
            bj = B[n, j]
            b2 += bj * bj
            size = abs(bj)
            if has_user and user[n, j] > size:
                size = user[n, j]
            t = (2 * d + 4) * eps * (size + A_abs_hi[j])
            if has_slack:
                t += slack[n, j]
            t2 += t * t
        q2 = 0.0
        f2 = 0.0
        delta = np.inf
        for i in range(d):
            qi = Q[n, i]
            q2 += qi * qi
            a = qi - lo[i]
            b = hi[i] - qi
            f2 += max(a, b) ** 2
            delta = min(delta, a, b)
        q_norm = math.sqrt(q2)
        eta = (math.sqrt(z2) + (m + d + 2) * eps * root_r * (math.sqrt(b2) + sigma_max * q_norm)
               + 1.01 * math.sqrt(t2) + residual_term) / s_min
        e = 1.01 * H * eta
        if local:
            r_q = 2.0 * (d + 2) * eps * root_r * q_norm
            room = delta - r_q
            if room > 0.0:
                lam = eta / (eta + room)
                e = min(e, 1.01 * (eta + lam * (math.sqrt(f2) + r_q + eta)))
        e_out[n] = e
