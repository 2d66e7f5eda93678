r"""The split linear model of vertical federated learning (docs/theory.md §3, docs/vflattack.md).

Logits ``z = W_act y + W_pas x + b`` with the active party's features ``y``
(d_a) and the passive parties' ``x`` (d, min-max scaled to [0, 1]; one block of columns per
passive party, :attr:`VFLModel.parties`). What the deployment publishes is the model's
**link** of the logits (:attr:`VFLModel.link`):

* ``softmax`` (the default): scores ``c = softmax(z)``; a binary scikit-learn model with one
  logit row ``w`` and intercept ``beta`` is the k = 2 case with ``z = (0, w^T [y; x] + beta)``;
* ``ovr`` (alias ``sigmoid``): k independent sigmoids ``sigma(z_j)`` (FATE 2.x's
  ``CoordinatedLR``, one-vs-rest), one output per row of ``W_pas`` (one row for a binary model);
* ``identity`` and every link SecretFlow-Serving defines (:mod:`vflattack.links`): the output
  ``yhat_scale * h(z_j)`` per row; ``identity`` is the logit itself (FATE's plaintext host
  logit, a linear bottom model's embeddings).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar

import numpy as np

import chebcenter as cc

from ._validate import InvalidInputError, as_2d, as_active, as_array, as_labels
from ._validate import passive_columns as _passive_columns

__all__ = ["LINK_SPELLINGS", "VFLModel", "canonical_link", "fit_softmax", "train_vfl_model"]

#: the model's own spellings of the two classification links; every other name is looked up in
#: :mod:`vflattack.links` (identity and SecretFlow-Serving's links)
LINK_SPELLINGS = {"softmax": "softmax", "ovr": "ovr", "sigmoid": "ovr", "one-vs-rest": "ovr", "onevsrest": "ovr"}
_PRECISIONS = ("float64", "float32")


def log_softmax(z: np.ndarray, axis: int = 1) -> np.ndarray:
    """``z - log sum exp z`` along ``axis``, stably: the operations of SciPy's
    ``scipy.special.log_softmax`` (the largest entry subtracted, a non-finite largest taken as
    0), in NumPy, so that importing vflattack, and every log-audit worker, does not load
    scipy.special (11 MB and 0.17 s) for it."""
    z = np.asarray(z, dtype=float)
    top = np.amax(z, axis=axis, keepdims=True)
    top[~np.isfinite(top)] = 0.0
    shifted = z - top
    with np.errstate(divide="ignore"):
        return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


def canonical_link(link: Any) -> str:
    """The canonical name of a link spelling: ``softmax``, ``ovr``, or a :mod:`vflattack.links` name.

    Examples
    --------
    >>> canonical_link("sigmoid"), canonical_link("t1"), canonical_link("Identity")
    ('ovr', 'LF_SIGMOID_T1', 'identity')
    """
    if not isinstance(link, str):
        name = getattr(link, "name", None)
        if isinstance(name, str):
            return canonical_link(name)
        raise InvalidInputError(f"link must be a link name (e.g. 'softmax', 'ovr', 'identity', 't1'); got {link!r}")
    key = link.strip().lower()
    if key in LINK_SPELLINGS:
        return LINK_SPELLINGS[key]
    from .links import get_link

    try:
        return get_link(link).name
    except InvalidInputError as exc:
        raise InvalidInputError(f"link must be softmax, ovr (alias sigmoid) or a link of vflattack.links; "
                                f"{exc}") from None


def _output_link(link: str):
    """The per-output link function of a non-softmax model (:class:`vflattack.links.Link`)."""
    from .links import get_link

    return get_link("sigmoid" if link == "ovr" else link)


def _feature_names(names: Any, W_act: Any, W_pas: np.ndarray) -> dict | None:
    """Checked ``{"active": (...), "passive": (...)}`` (strings, one per column, all distinct)."""
    if names is None:
        return None
    d_a = np.asarray(W_act).shape[1] if np.asarray(W_act).ndim == 2 else 0
    if not isinstance(names, dict) or set(names) != {"active", "passive"}:
        raise InvalidInputError(f"feature_names must be a dict with the keys 'active' and 'passive' (lists of "
                                f"column names); got {names!r}")
    out = {}
    for side, n in (("active", d_a), ("passive", W_pas.shape[1])):
        vals = names[side]
        if isinstance(vals, str) or not isinstance(vals, Sequence) or len(vals) != n \
                or not all(isinstance(v, str) and v for v in vals):
            raise InvalidInputError(f"feature_names[{side!r}] must list {n} nonempty column names, one per column "
                                    f"of {'W_act' if side == 'active' else 'W_pas'}; got {vals!r}")
        out[side] = tuple(vals)
    every = out["active"] + out["passive"]
    if len(set(every)) != len(every):
        dup = sorted({v for v in every if every.count(v) > 1})
        raise InvalidInputError(f"feature_names must name every column once; {dup} appear more than once")
    return out


def _as_domain(onehot: Any, binary: Any, d: int, feature_names: dict | None) -> tuple[tuple, tuple]:
    """Checked one-hot groups (disjoint, each of >= 2 passive columns, sorted) and binary columns."""
    names = list(feature_names["passive"]) if feature_names is not None else None

    def column(v: Any, what: str) -> int:
        if isinstance(v, str):
            if names is None or v not in names:
                raise InvalidInputError(f"{what}: {v!r} is not a passive feature's name"
                                        + ("" if names is None else f" (they are {names[:8]}...)"
                                           if len(names) > 8 else f" (they are {names})"))
            return names.index(v)
        if isinstance(v, (int, np.integer)) and not isinstance(v, bool) and 0 <= int(v) < d:
            return int(v)
        raise InvalidInputError(f"{what}: {v!r} is not a passive column (an index below d = {d}, or a name)")

    groups: tuple = ()
    if isinstance(onehot, np.ndarray):
        onehot = onehot.tolist()
    if onehot is not None:
        if isinstance(onehot, (str, bytes)) or not isinstance(onehot, Sequence):
            raise InvalidInputError(f"onehot must be a list of groups of passive columns; got {onehot!r}")
        out = []
        for g in onehot:
            if isinstance(g, (str, bytes)) or not isinstance(g, (Sequence, np.ndarray)) or len(g) < 2:
                raise InvalidInputError(f"onehot: each group lists two or more passive columns; got {g!r}")
            cols = sorted(column(v, "onehot") for v in g)
            if len(set(cols)) != len(cols):
                raise InvalidInputError(f"onehot: group {list(g)!r} names a column twice")
            out.append(tuple(cols))
        flat = [c for g in out for c in g]
        if len(set(flat)) != len(flat):
            raise InvalidInputError(f"onehot: the groups must be disjoint; column(s) "
                                    f"{sorted({c for c in flat if flat.count(c) > 1})} appear in two")
        groups = tuple(out)
    bins: tuple = ()
    if binary is not None:
        if isinstance(binary, (str, bytes)) or not isinstance(binary, (Sequence, np.ndarray)):
            raise InvalidInputError(f"binary must be a list of passive columns; got {binary!r}")
        bins = tuple(sorted({column(v, "binary") for v in binary}))
    return groups, bins


def _as_parties(parties: Any, names: Any, d: int) -> tuple[tuple, tuple]:
    """Checked passive blocks (a partition of ``range(d)``, each sorted) and their names."""
    if parties is None:
        blocks = (tuple(range(d)),)
    else:
        if isinstance(parties, (int, np.integer)) and not isinstance(parties, bool):
            if not 1 <= int(parties) <= d:
                raise InvalidInputError(f"parties must be between 1 and d = {d} (equal contiguous blocks) or a list of "
                                        f"column blocks; got {parties!r}")
            blocks = tuple(tuple(int(i) for i in blk) for blk in np.array_split(np.arange(d), int(parties)))
        else:
            try:
                blocks = tuple(tuple(int(i) for i in np.asarray(blk).ravel()) for blk in parties)
            except (TypeError, ValueError):
                raise InvalidInputError(f"parties must be a number of parties or a list of column blocks (indices "
                                        f"into the passive columns); got {parties!r}") from None
        flat = sorted(i for blk in blocks for i in blk)
        if not blocks or any(len(blk) == 0 for blk in blocks) or flat != list(range(d)):
            raise InvalidInputError(f"parties must split the {d} passive columns 0..{d - 1} into nonempty blocks, "
                                    f"each column in exactly one; got {parties!r}")
        blocks = tuple(tuple(sorted(blk)) for blk in blocks)
    if names is None:
        names = ("passive",) if len(blocks) == 1 else tuple(f"P{p + 1}" for p in range(len(blocks)))
    names = tuple(str(n) for n in names)
    if len(names) != len(blocks) or len(set(names)) != len(names):
        raise InvalidInputError(f"party_names must name each of the {len(blocks)} parties once; got {names!r}")
    return blocks, names


@dataclass(frozen=True)
class VFLModel:
    """A split linear model with k outputs: ``link(W_act y + W_pas x + b)`` (module docstring).

    Parameters
    ----------
    W_act : array_like, shape (k, d_a)
        Active party's weights (d_a may be 0).
    W_pas : array_like, shape (k, d)
        Passive parties' weights (their columns side by side, :attr:`parties`).
    b : array_like, shape (k,)
        Intercepts.
    classes : array_like, optional
        The class labels in score-column order (default ``0..k-1``; for a one-output model,
        two labels, the output scoring the second).
    link : str, default "softmax"
        What is published of the logits: ``softmax`` (k >= 2), ``ovr`` / ``sigmoid``,
        ``identity``, or a SecretFlow-Serving link by its name there (``LF_SIGMOID_T1`` or
        ``t1``, ...: :data:`vflattack.links.LINKS`).
    parties : int or sequence of sequences of int, optional
        The passive parties: blocks of column indices into ``W_pas`` that partition them, or a
        number P of equal contiguous blocks. Default one party holding every column.
    party_names : sequence of str, optional
        One name per party (default ``passive`` for one party, ``P1..PP`` for several).
    yhat_scale : float, default 1
        SecretFlow's output scale: the published value is ``yhat_scale * h(z)`` (links other
        than softmax and ovr).
    precision : {"float64", "float32"}, optional
        The arithmetic the deployment computes the published value in. float32 (a torch
        bottom model, Flower's example) widens every published value by float32's rounding of
        the logits and of the value (:mod:`vflattack.outputs`). Default float64 (SecretFlow-Serving
        applies its links in double, scikit-learn computes in double).
    feature_names : dict, optional
        ``{"active": [...], "passive": [...]}``: the columns' names in the deployment, in the
        order of ``W_act``'s and ``W_pas``'s columns (the importers of :mod:`vflattack.importers`
        fill it from the export); a log whose columns carry these names is read by name.
    onehot : sequence of sequences, optional
        One-hot groups of passive columns (indices, or names with ``feature_names``): in every
        record each group's features are 0 or 1 and sum to 1. Every tabular adversary knows
        this encoding; each group is one more row of the set, ``sum_{j in g} x_j = 1``,
        certified like the rows the scores give (docs/vflattack.md, "Feature domains").
    binary : sequence, optional
        Passive columns that are 0 or 1 (beside the one-hot groups' members). They add no row
        (the set stays convex); the audit reports what rounding the center reads off them
        (:meth:`binary_reading`).

    Examples
    --------
    >>> import numpy as np
    >>> m = VFLModel(np.zeros((2, 1)), np.array([[0.0], [2.0]]), np.zeros(2))
    >>> m.predict_proba(np.zeros((1, 1)), np.ones((1, 1))).round(4).tolist()
    [[0.1192, 0.8808]]
    """

    W_act: np.ndarray
    W_pas: np.ndarray
    b: np.ndarray
    classes: Any = None
    link: str = "softmax"
    parties: Any = None
    party_names: Any = None
    yhat_scale: float = 1.0
    precision: str | None = None
    feature_names: Any = None
    onehot: Any = None
    binary: Any = None

    def __post_init__(self) -> None:
        link = canonical_link(self.link)
        object.__setattr__(self, "link", link)
        W_pas = as_2d("W_pas", self.W_pas)
        k = W_pas.shape[0]
        if link == "softmax" and k < 2:
            raise InvalidInputError(f"W_pas must have k >= 2 rows (one per class) for link 'softmax'; got shape "
                                    f"{W_pas.shape} (a one-output model is link='ovr' or another link)")
        if k < 1:
            raise InvalidInputError(f"W_pas must have at least one row (one per output); got shape {W_pas.shape}")
        scale = self.yhat_scale
        if isinstance(scale, bool) or not isinstance(scale, (int, float, np.floating, np.integer)) \
                or not (np.isfinite(scale) and scale > 0):
            raise InvalidInputError(f"yhat_scale must be a finite number > 0; got {scale!r}")
        if float(scale) != 1.0 and link in ("softmax", "ovr"):
            raise InvalidInputError(f"yhat_scale applies to the links other than softmax and ovr; got {scale!r} "
                                    f"with link {link!r}")
        object.__setattr__(self, "yhat_scale", float(scale))
        precision = self.precision
        if precision is None:
            precision = "float64"
        if precision not in _PRECISIONS:
            raise InvalidInputError(f"precision must be one of {_PRECISIONS}; got {precision!r}")
        if precision == "float32" and link not in ("softmax", "ovr", "identity"):
            raise InvalidInputError(f"precision 'float32' models a torch deployment (links ovr and identity); "
                                    f"SecretFlow-Serving applies its link {link!r} in double: leave precision at "
                                    f"float64, or bound the values' error with a release (e.g. 'float32')")
        if link == "softmax" and precision == "float32":
            raise InvalidInputError("precision 'float32' on a softmax model: audit its scores with the release "
                                    "'float32' (Release('float32'), --release float32) instead")
        object.__setattr__(self, "precision", precision)
        object.__setattr__(self, "feature_names", _feature_names(self.feature_names, self.W_act, W_pas))
        groups, binary = _as_domain(self.onehot, self.binary, W_pas.shape[1], self.feature_names)
        object.__setattr__(self, "onehot", groups)
        object.__setattr__(self, "binary", binary)
        blocks, names = _as_parties(self.parties, self.party_names, W_pas.shape[1])
        object.__setattr__(self, "parties", blocks)
        object.__setattr__(self, "party_names", names)
        W_act = as_array("W_act", self.W_act)
        W_act = as_2d("W_act", W_act, n_rows=k, rows="one per class, like W_pas") if W_act.size else np.zeros((k, 0))
        b = as_array("b", self.b)
        if b.shape != (k,) or not np.all(np.isfinite(b)):
            raise InvalidInputError(f"b must be a finite array of shape ({k},); got shape {b.shape}")
        n_labels = 2 if k == 1 else k
        classes = np.arange(n_labels) if self.classes is None else np.asarray(self.classes)
        if classes.shape != (n_labels,):
            raise InvalidInputError(f"classes must have shape ({n_labels},); got {classes.shape}")
        for name, val in (("W_act", W_act), ("W_pas", W_pas), ("b", b), ("classes", classes)):
            val = np.array(val)
            val.setflags(write=False)
            object.__setattr__(self, name, val)

    @property
    def n_classes(self) -> int:
        """k: the number of outputs (score columns), one per row of ``W_pas``."""
        return self.W_pas.shape[0]

    @property
    def n_active(self) -> int:
        return self.W_act.shape[1]

    @property
    def n_passive(self) -> int:
        return self.W_pas.shape[1]

    @property
    def n_parties(self) -> int:
        return len(self.parties)

    def party_columns(self, party: Any) -> np.ndarray:
        """The passive columns (indices into ``X``) of ``party``, by name or index.

        Examples
        --------
        >>> m = VFLModel(np.zeros((2, 0)), np.ones((2, 5)), np.zeros(2), parties=[[0, 1], [2, 3, 4]])
        >>> m.party_names, m.party_columns("P2").tolist()
        (('P1', 'P2'), [2, 3, 4])
        """
        return np.asarray(self.parties[self._party_index(party)], dtype=np.int64)

    def _party_index(self, party: Any) -> int:
        if isinstance(party, str) and party in self.party_names:
            return self.party_names.index(party)
        if isinstance(party, (int, np.integer)) and not isinstance(party, bool) and 0 <= int(party) < self.n_parties:
            return int(party)
        raise InvalidInputError(f"party must be one of {list(self.party_names)} (or an index below "
                                f"{self.n_parties}); got {party!r}")

    def colluding(self, parties: Sequence[Any]) -> tuple[VFLModel, np.ndarray, np.ndarray]:
        """The model the adversary attacks when the active party colludes with ``parties``:
        their columns join the active side (after its own), the rest stay passive.

        Returns ``(model, moved, kept)``: the smaller model, and the passive columns moved to
        the active side and kept, so that the records are ``Y' = [Y, X[:, moved]]`` and
        ``X' = X[:, kept]`` (docs/theory.md §13: collusion is the smaller problem with the
        colluders' features known).

        Examples
        --------
        >>> m = VFLModel(np.zeros((2, 0)), np.arange(10.0).reshape(2, 5), np.zeros(2), parties=[[0, 1], [2, 3, 4]])
        >>> small, moved, kept = m.colluding(["P1"])
        >>> small.n_active, small.n_passive, small.party_names, moved.tolist()
        (2, 3, ('P2',), [0, 1])
        """
        if isinstance(parties, (str, int)):
            parties = [parties]
        idx = sorted({self._party_index(p) for p in parties})
        if len(idx) == self.n_parties:
            raise InvalidInputError(f"colluding must leave at least one passive party; got every party {list(parties)}")
        moved = np.array(sorted(i for p in idx for i in self.parties[p]), dtype=np.int64)
        kept = np.setdiff1d(np.arange(self.n_passive), moved)
        where = {int(c): n for n, c in enumerate(kept)}
        rest = [p for p in range(self.n_parties) if p not in idx]
        names = None if self.feature_names is None else {
            "active": list(self.feature_names["active"]) + [self.feature_names["passive"][i] for i in moved],
            "passive": [self.feature_names["passive"][i] for i in kept]}
        # a group wholly kept stays a row; one that lost members to the colluders is dropped
        # (its right-hand side would be 1 minus their known values, a row per record: sound to drop)
        groups = [[where[c] for c in g] for g in self.onehot if all(c in where for c in g)]
        small = VFLModel(np.hstack([self.W_act, self.W_pas[:, moved]]), self.W_pas[:, kept], self.b, self.classes,
                         link=self.link, parties=[[where[i] for i in self.parties[p]] for p in rest],
                         party_names=[self.party_names[p] for p in rest], yhat_scale=self.yhat_scale,
                         precision=self.precision, feature_names=names, onehot=groups or None,
                         # a dropped group's kept members are still 0 or 1
                         binary=sorted({where[c] for c in self.binary if c in where}
                                       | {where[c] for g in self.onehot if not all(c in where for c in g)
                                          for c in g if c in where}) or None)
        return small, moved, kept

    @cached_property
    def system_matrix(self) -> np.ndarray:
        """``A = J W_pas``, shape (k-1, d): the scores give ``A x = b'`` (docs/theory.md, "The mapping").

        ``J`` is the difference matrix (:func:`vflattack.difference_matrix`), so ``J W_pas``
        is the differences of consecutive rows of ``W_pas``. For a link other than softmax
        each output gives its own row: ``A = W_pas``."""
        A = np.diff(self.W_pas, axis=0) if self.link == "softmax" else self.W_pas.copy()
        A.setflags(write=False)
        return A

    @cached_property
    def pair_matrix(self) -> np.ndarray:
        """``(e_j - e_i)^T W_pas`` for every class pair ``i < j`` (in that order), shape
        (k(k-1)/2, d): the rows a release's bounds constrain (:mod:`vflattack.release`)."""
        k = self.n_classes
        A = np.array([self.W_pas[j] - self.W_pas[i] for i in range(k) for j in range(i + 1, k)]).reshape(-1, self.n_passive)
        A.setflags(write=False)
        return A

    @property
    def row_matrix(self) -> np.ndarray:
        """The rows a release's interval bounds constrain: :attr:`pair_matrix` for softmax
        (bounds on log-ratios of scores), ``W_pas`` for every other link (one row per output)."""
        return self.pair_matrix if self.link == "softmax" else self.system_matrix

    @cached_property
    def domain_matrix(self) -> np.ndarray:
        """The one-hot groups' rows, shape (groups, d): ``G x = 1`` for every record."""
        G = np.zeros((len(self.onehot), self.n_passive))
        for r, g in enumerate(self.onehot):
            G[r, list(g)] = 1.0
        G.setflags(write=False)
        return G

    @property
    def binary_columns(self) -> tuple:
        """Every passive column known to be 0 or 1: the one-hot groups' members and ``binary``."""
        return tuple(sorted({c for g in self.onehot for c in g} | set(self.binary)))

    def with_domain(self, onehot: Any = None, binary: Any = None) -> VFLModel:
        """This model with the passive features' encoding known: one-hot groups and binary
        columns (class docstring). The published values are unchanged; the sets gain a row per
        group, ``sum_{j in g} x_j = 1`` (:meth:`domain_rows`).

        Examples
        --------
        >>> m = VFLModel(np.zeros((1, 0)), np.ones((1, 4)), np.zeros(1), link="identity")
        >>> coded = m.with_domain(onehot=[[1, 2, 3]])
        >>> coded.onehot, coded.domain_slice(False).rank    # x0 + x1 + x2 + x3 = z and x1 + x2 + x3 = 1
        (((1, 2, 3),), 2)
        """
        import dataclasses

        return dataclasses.replace(self, onehot=onehot, binary=binary)

    def binary_reading(self, X: Any) -> np.ndarray:
        """What rounding reads off reconstructions ``X`` (N, d): each one-hot group's largest
        entry set to 1 and the rest to 0, each binary column rounded to 0 or 1; other columns
        as given. Rows with a non-finite entry stay NaN.

        Examples
        --------
        >>> m = VFLModel(np.zeros((2, 0)), np.ones((2, 4)), np.zeros(2), onehot=[[0, 1, 2]], binary=[3])
        >>> m.binary_reading(np.array([[0.2, 0.5, 0.3, 0.7]])).tolist()
        [[0.0, 1.0, 0.0, 1.0]]
        """
        X = np.array(X, dtype=float, copy=True)
        bad = ~np.all(np.isfinite(X), axis=1)
        for g in self.onehot:
            cols = list(g)
            top = np.argmax(np.nan_to_num(X[:, cols], nan=-np.inf), axis=1)
            X[:, cols] = 0.0
            X[np.arange(X.shape[0]), np.asarray(cols)[top]] = 1.0
        if self.binary:
            cols = list(self.binary)
            X[:, cols] = (X[:, cols] >= 0.5).astype(float)
        X[bad] = np.nan
        return X

    def domain_slice(self, bounded: bool) -> cc.BoxSlice:
        """:attr:`pair_box_slice` (``bounded``) or :attr:`box_slice` with the one-hot groups'
        rows below the rows the scores give (the same object when there is no group)."""
        if not self.onehot:
            return self.pair_box_slice if bounded else self.box_slice
        return self._domain_slices[bool(bounded)]

    def domain_scale(self, bounded: bool) -> float:
        """The factor ``s`` of the groups' rows in :meth:`domain_slice`: ``s G x = s``, with ``s``
        the median norm of the scores' rows (1 when those are zero). The set is the same for any
        ``s > 0``; rows of one scale keep the relaxations' solvers better conditioned (six draws of
        60 records with score rows of norm 1e-6: rcc1 stopped INACCURATE on 27 of 360 rows below
        unit rows, on 18 below equilibrated ones; tests/vflattack/test_va_onehot.py). ``s`` times
        a 0/1 vector's sum is exact in floating point: the right-hand side is ``s`` itself."""
        A = self.row_matrix if bounded else self.system_matrix
        norms = np.linalg.norm(A, axis=1) if A.size else np.zeros(0)
        s = float(np.median(norms)) if norms.size else 0.0
        return s if np.isfinite(s) and s > 0 else 1.0

    def domain_rows(self, bounded: bool) -> tuple[np.ndarray, float]:
        """``(s G, s)``: the groups' rows as :meth:`domain_slice` holds them and their
        right-hand side (:meth:`domain_scale`), appended to a record's rows by
        :func:`vflattack.attacks.whitebox.with_domain_rows`."""
        s = self.domain_scale(bounded)
        return s * self.domain_matrix, s

    @cached_property
    def _domain_slices(self) -> dict:
        return {b: cc.BoxSlice(np.vstack([self.row_matrix if b else self.system_matrix, self.domain_rows(b)[0]]),
                               lo=0.0, hi=1.0)
                for b in (False, True)}

    @cached_property
    def pair_box_slice(self) -> cc.BoxSlice:
        """``chebcenter.BoxSlice(row_matrix, 0, 1)``, factored once: every attack and exposure
        on a release of this model's outputs solves over it."""
        return cc.BoxSlice(self.row_matrix, lo=0.0, hi=1.0)

    @cached_property
    def box_slice(self) -> cc.BoxSlice:
        """``chebcenter.BoxSlice(A, 0, 1)``: the factored system (rank, null space, A^+), built once.

        Every attack on this model's scores solves over this one object."""
        return cc.BoxSlice(self.system_matrix, lo=0.0, hi=1.0)

    def logits(self, Y: Any, X: Any) -> np.ndarray:
        """``z = Y W_act^T + X W_pas^T + b``, shape (N, k)."""
        X = as_2d("X", X, n_cols=self.n_passive, cols="one per passive feature")
        Y = as_active("Y", Y, X.shape[0], self.n_active)
        return Y @ self.W_act.T + X @ self.W_pas.T + self.b

    def predict_log_proba(self, Y: Any, X: Any) -> np.ndarray:
        """``log softmax(z)`` (``log sigmoid(z)`` per output for ovr), computed stably, shape (N, k)."""
        z = self.logits(Y, X)
        if self.link == "softmax":
            return log_softmax(z, axis=1)
        if self.link == "ovr":
            return -np.logaddexp(0.0, -z)
        raise InvalidInputError(f"predict_log_proba needs a probability link (softmax or ovr); this model's link is "
                                f"{self.link!r}: use outputs()")

    def outputs(self, Y: Any, X: Any) -> np.ndarray:
        """What the deployment publishes for the records, in float64, shape (N, k): the
        softmax scores, the k sigmoids (ovr), or ``yhat_scale * h(z)`` for the other links.

        Examples
        --------
        >>> m = VFLModel(np.zeros((1, 0)), np.array([[4.0]]), np.zeros(1), link="t1")
        >>> m.outputs(None, np.array([[0.25], [1.0]])).tolist()        # 0.5 + 0.25 z, clamped
        [[0.75], [1.0]]
        """
        if self.link in ("softmax", "ovr"):
            return np.exp(self.predict_log_proba(Y, X))
        with np.errstate(all="ignore"):
            return self.yhat_scale * np.asarray(_output_link(self.link)(self.logits(Y, X)), dtype=float)

    def predict_proba(self, Y: Any, X: Any) -> np.ndarray:
        """The confidence scores revealed to the active party, shape (N, k): ``softmax(z)``, or
        the model's published outputs for another link (:meth:`outputs`)."""
        if self.link == "softmax":
            return np.exp(self.predict_log_proba(Y, X))
        return self.outputs(Y, X)

    def predict(self, Y: Any, X: Any) -> np.ndarray:
        """The most likely class label per row (for one output: the second label where its
        logit is positive)."""
        z = self.logits(Y, X)
        if z.shape[1] == 1:
            return self.classes[(z[:, 0] > 0).astype(np.int64)]
        return self.classes[np.argmax(z, axis=1)]

    #: the model file format (JSON): bump on any incompatible change
    SCHEMA_VERSION: ClassVar[int] = 2

    def to_dict(self) -> dict:
        """The model as plain JSON data (see :meth:`save`)."""
        classes = self.classes.tolist()
        return {"format": "vflattack.VFLModel", "schema_version": self.SCHEMA_VERSION,
                "n_classes": self.n_classes, "n_active": self.n_active, "n_passive": self.n_passive,
                "classes": classes, "W_act": self.W_act.tolist(), "W_pas": self.W_pas.tolist(), "b": self.b.tolist(),
                "link": self.link, "yhat_scale": self.yhat_scale, "precision": self.precision,
                "parties": [list(p) for p in self.parties], "party_names": list(self.party_names),
                "feature_names": None if self.feature_names is None
                else {side: list(v) for side, v in self.feature_names.items()},
                "onehot": [list(g) for g in self.onehot] or None, "binary": list(self.binary) or None}

    def save(self, path: Any) -> None:
        """Write the model as JSON: an open, documented format an auditor can be handed.

        Keys: ``format`` ("vflattack.VFLModel"), ``schema_version`` (2), ``n_classes``,
        ``n_active``, ``n_passive``, ``classes`` (labels in score-column order), ``W_act``
        (k x d_a), ``W_pas`` (k x d), ``b`` (k), ``link``, ``yhat_scale``, ``precision``,
        ``parties`` (column blocks), ``party_names``, ``feature_names`` (null, or the active
        and passive columns' names), ``onehot`` and ``binary`` (null, or the passive features'
        encoding: groups of columns, and columns). Logits are ``W_act y + W_pas x + b``
        and the published values their link (docs/theory.md §3). Floats are written with full
        precision (``repr``), so :meth:`load` gives back the same model bit for bit. Files of
        schema version 1 (written before links and parties) load as softmax with one party.

        Examples
        --------
        >>> import numpy as np, tempfile, pathlib
        >>> m = VFLModel(np.zeros((2, 1)), np.array([[0.0], [2.0]]), np.zeros(2))
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "model.json"
        >>> m.save(path)
        >>> VFLModel.load(path).predict_proba(np.zeros((1, 1)), np.ones((1, 1))).round(4).tolist()
        [[0.1192, 0.8808]]
        """
        import json
        import pathlib

        pathlib.Path(path).write_text(json.dumps(self.to_dict(), indent=1))

    @classmethod
    def load(cls, path: Any) -> VFLModel:
        """Read a model written by :meth:`save` (the schema version is checked)."""
        import json
        import pathlib

        try:
            doc = json.loads(pathlib.Path(path).read_text())
        except (OSError, ValueError) as exc:
            raise InvalidInputError(f"path {str(path)!r} is not a readable model file: {exc}") from None
        if not isinstance(doc, dict) or doc.get("format") != "vflattack.VFLModel":
            raise InvalidInputError(f"path {str(path)!r} is not a vflattack model file (no format "
                                    "'vflattack.VFLModel')")
        if doc.get("schema_version") not in (1, cls.SCHEMA_VERSION):
            raise InvalidInputError(f"model file {str(path)!r} has schema_version {doc.get('schema_version')!r}; "
                                    f"this vflattack reads versions 1 and {cls.SCHEMA_VERSION}")
        k, d_a = int(doc["n_classes"]), int(doc["n_active"])
        W_act = np.asarray(doc["W_act"], dtype=float).reshape(k, d_a) if d_a else np.zeros((k, 0))
        return cls(W_act, doc["W_pas"], doc["b"], doc["classes"], link=doc.get("link", "softmax"),
                   parties=doc.get("parties"), party_names=doc.get("party_names"),
                   yhat_scale=doc.get("yhat_scale", 1.0), precision=doc.get("precision"),
                   feature_names=doc.get("feature_names"), onehot=doc.get("onehot"), binary=doc.get("binary"))

    @classmethod
    def from_sklearn(cls, clf: Any, passive_columns: Sequence[int], *, link: str | None = None,
                     parties: Any = None, party_names: Any = None) -> VFLModel:
        """Split a fitted scikit-learn linear classifier into active and passive parts.

        ``clf`` was fitted on the full feature matrix F; ``passive_columns`` are the column
        indices of F held by the passive parties; the active features are the remaining
        columns in increasing order, so ``Y = F[:, active]``, ``X = F[:, passive_columns]``.
        ``parties`` splits the passive columns into parties (blocks of indices into
        ``passive_columns``).

        The link is read off the classifier (``link=None``):

        * a ``LogisticRegression`` (multinomial, or binary) is ``softmax``; binary models (one
          coefficient row) become ``z = (0, w^T f + beta)``;
        * a one-vs-rest model is ``ovr``, k independent sigmoids: a ``OneVsRestClassifier`` of
          linear binary classifiers, and a ``LogisticRegression`` with ``multi_class="ovr"`` (or
          ``"auto"`` with the ``liblinear`` solver) on the scikit-learn versions that still take
          that parameter. ``ovr`` models what such a deployment publishes when it serves each
          class's sigmoid, ``sigmoid(clf.decision_function(F))``; for k > 2 scikit-learn's own
          ``predict_proba`` divides those by their sum, which is not modelled: audit the
          sigmoids or the decision function. Read as softmax, such a model would give k - 1 score differences
          where it publishes k independent scores, and understate what leaks; asking for
          ``link="softmax"`` on it is an error.

        ``link="ovr"`` on a multinomial model keeps its logits and publishes each class's
        sigmoid on its own (a deployment that serves ``sigmoid(clf.decision_function(F))``).

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.linear_model import LogisticRegression
        >>> F = np.array([[0, 0.], [1, 0], [0, 1], [1, 1]]); lab = [0, 0, 1, 1]
        >>> clf = LogisticRegression().fit(F, lab)
        >>> m = VFLModel.from_sklearn(clf, passive_columns=[1])
        >>> np.allclose(m.predict_proba(F[:, [0]], F[:, [1]]), clf.predict_proba(F))
        True
        """
        name = type(clf).__name__
        classes = getattr(clf, "classes_", None)
        ovr = _sklearn_is_ovr(clf)
        if ovr and hasattr(clf, "estimators_"):
            coef, intercept = _ovr_estimators(clf, name)
        else:
            if not hasattr(clf, "coef_") or not hasattr(clf, "intercept_") or classes is None:
                raise InvalidInputError(
                    f"clf must be a fitted linear classifier (coef_, intercept_ and classes_, e.g. a fitted "
                    f"LogisticRegression or a OneVsRestClassifier of them); got {name} without "
                    f"{'coef_' if not hasattr(clf, 'coef_') else 'classes_'}")
            coef = as_array("clf.coef_", clf.coef_)
            intercept = as_array("clf.intercept_", clf.intercept_)
        classes = np.asarray(classes)
        k = classes.size
        if coef.ndim != 2 or intercept.ndim != 1 or k < 2 or coef.shape[0] != (1 if k == 2 else k) \
                or intercept.shape[0] != coef.shape[0]:
            raise InvalidInputError(
                f"clf must be a fitted logistic classifier: coef_ of shape (1, F) for 2 classes or (k, F) for k > 2, "
                f"intercept_ to match; got {name} with {k} classes, coef_ {coef.shape}, intercept_ {intercept.shape}")
        if not (np.all(np.isfinite(coef)) and np.all(np.isfinite(intercept))):
            raise InvalidInputError(f"clf's coef_ and intercept_ must be finite; {name} has NaN or inf")
        n_feat = coef.shape[1]
        passive = _passive_columns("passive_columns", passive_columns, n_feat, keep_order=True)
        active = np.setdiff1d(np.arange(n_feat), passive)
        if link is None:
            link = "ovr" if ovr else "softmax"
        link = canonical_link(link)
        if link not in ("softmax", "ovr"):
            raise InvalidInputError(f"link must be 'softmax' or 'ovr' for a scikit-learn classifier; got {link!r}")
        if ovr and link == "softmax" and k > 2:
            raise InvalidInputError(
                f"link must be 'ovr' for {name}: it is one-vs-rest ({_ovr_reason(clf)}), k = {k} independent "
                f"sigmoids, not a softmax; audited as softmax it would understate what leaks (leave link unset)")
        if coef.shape[0] == 1 and link == "softmax":  # binary: logits (0, w^T f + beta)
            coef = np.vstack([np.zeros(n_feat), coef[0]])
            intercept = np.array([0.0, intercept[0]])
        names = getattr(clf, "feature_names_in_", None)
        feature_names = None if names is None else {
            "active": [str(names[i]) for i in active], "passive": [str(names[i]) for i in passive]}
        return cls(coef[:, active], coef[:, passive], intercept, classes, link=link, parties=parties,
                   party_names=party_names, feature_names=feature_names)


def _sklearn_is_ovr(clf: Any) -> bool:
    """Whether a scikit-learn classifier scores its classes one against the rest."""
    if type(clf).__name__ == "OneVsRestClassifier":
        return True
    multi = getattr(clf, "multi_class", None)  # LogisticRegression before scikit-learn 1.8
    if multi == "ovr":
        return True
    solver = getattr(clf, "solver", None)
    if multi not in ("auto", "deprecated"):     # "deprecated": the default of scikit-learn 1.5 to 1.7
        return False
    # "auto" (and "deprecated", which meant it) is one-vs-rest with liblinear, and with newton-cholesky
    # before scikit-learn 1.6 taught that solver the multinomial loss (sklearn/linear_model/_logistic.py,
    # _check_multi_class and predict_proba); for binary problems both readings agree
    if solver == "liblinear":
        return True
    return solver == "newton-cholesky" and _sklearn_version() < (1, 6)


def _sklearn_version() -> tuple[int, int]:
    """The installed scikit-learn's (major, minor): the one whose predict_proba the model runs."""
    import sklearn

    try:
        major, minor = str(sklearn.__version__).split(".")[:2]
        return int(major), int("".join(ch for ch in minor if ch.isdigit()) or 0)
    except ValueError:
        return (99, 0)


def _ovr_reason(clf: Any) -> str:
    if type(clf).__name__ == "OneVsRestClassifier":
        return "a OneVsRestClassifier"
    return f"multi_class={getattr(clf, 'multi_class', None)!r}, solver={getattr(clf, 'solver', None)!r}"


def _ovr_estimators(clf: Any, name: str) -> tuple[np.ndarray, np.ndarray]:
    """``(coef, intercept)`` stacked from a OneVsRestClassifier's binary linear estimators."""
    ests = list(getattr(clf, "estimators_", []))
    if not ests or not all(hasattr(e, "coef_") and hasattr(e, "intercept_") for e in ests):
        raise InvalidInputError(f"clf must be a fitted {name} of linear classifiers (each with coef_ and intercept_, "
                                f"e.g. LogisticRegression); got estimators "
                                f"{sorted({type(e).__name__ for e in ests})}")
    coef = [as_array("clf.estimators_[j].coef_", e.coef_).reshape(-1) for e in ests]
    intercept = [as_array("clf.estimators_[j].intercept_", e.intercept_).reshape(-1) for e in ests]
    if len({c.size for c in coef}) != 1 or any(i.size != 1 for i in intercept):
        raise InvalidInputError(f"clf's estimators must be binary linear classifiers on the same features; got "
                                f"coef_ sizes {[c.size for c in coef]}")
    return np.vstack(coef), np.concatenate(intercept)


def fit_softmax(F: np.ndarray, targets: np.ndarray, weights: np.ndarray, l2: float,
                theta0: np.ndarray, max_iter: int = 500, info: dict | None = None):
    r"""L-BFGS on the weighted soft-target softmax cross-entropy with L2 on W.

    Minimises ``sum_n w_n (-sum_j T_nj log softmax(W f_n + b)_j) + (l2/2) ||W||_F^2``
    (rows of ``targets`` sum to 1). Its gradient in the logits is
    ``w_n (p_n - T_n)``. Returns ``(W, b, loss)``; ``info``, if given, receives the
    iterations run (``n_iter``).
    """
    N, f = F.shape
    k = targets.shape[1]

    def loss(theta):
        W = theta[: k * f].reshape(k, f)
        b = theta[k * f:]
        logp = log_softmax(F @ W.T + b, axis=1)
        value = -np.sum(weights[:, None] * targets * logp) + 0.5 * l2 * np.sum(W * W)
        G = weights[:, None] * (np.exp(logp) - targets)
        grad_W = G.T @ F + l2 * W
        return value, np.concatenate([grad_W.ravel(), G.sum(axis=0)])

    from scipy.optimize import minimize  # here, not at import: an import does no work
    sol = minimize(loss, theta0, jac=True, method="L-BFGS-B", options={"maxiter": int(max_iter), "gtol": 1e-9})
    if info is not None:
        info["n_iter"] = int(sol.nit)
    return sol.x[: k * f].reshape(k, f), sol.x[k * f:], float(sol.fun)


def train_vfl_model(Y: Any, X: Any, labels: Any, *, l2: float = 1e-3, max_iter: int = 500,
                    rng: Any = 0, info: dict | None = None, link: str = "softmax", parties: Any = None,
                    party_names: Any = None, yhat_scale: float = 1.0, precision: str | None = None) -> VFLModel:
    r"""Fit the split model by L-BFGS on the L2-regularised softmax cross-entropy.

    Minimises ``(1/N) sum_n -log softmax(W f_n + b)_{y_n} + (l2/2) ||W||_F^2``
    over ``W = [W_act, W_pas]`` and ``b`` (not regularised), with
    ``f = [y; x]``. Deterministic: the start is ``W = 0, b = 0`` plus a tiny
    jitter seeded by ``rng``, so the same arguments give the same model bit
    for bit. ``info``, if given, receives the L-BFGS iterations run (``n_iter``).

    Any other ``link`` is fitted one-vs-rest, as FATE's ``CoordinatedLR`` and SecretFlow's
    SS-LR are: one L2-regularised logistic regression per class (one in all for two
    classes), ``(1/N) sum_n log(1 + exp(-s_n (w^T f_n + beta))) + (l2/2) ||w||^2`` with
    ``s_n = +-1``; the link then says what is published of those logits. ``parties``,
    ``party_names``, ``yhat_scale`` and ``precision`` are passed to :class:`VFLModel`.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> Y, X = rng.random((200, 2)), rng.random((200, 3))
    >>> lab = (Y[:, 0] + X[:, 0] > 1).astype(int)
    >>> m = train_vfl_model(Y, X, lab)
    >>> float((m.predict(Y, X) == lab).mean()) > 0.9
    True
    """
    X = as_2d("X", X)
    N = X.shape[0]
    Y = as_active("Y", Y, N, None)
    codes, classes = as_labels("labels", labels, N)
    if not (np.isfinite(l2) and l2 >= 0):
        raise InvalidInputError(f"l2 must be a finite number >= 0; got {l2!r}")
    F = np.hstack([Y, X])
    k, f = classes.size, F.shape[1]
    extra = {"link": link, "parties": parties, "party_names": party_names, "yhat_scale": yhat_scale,
             "precision": precision}
    if canonical_link(link) != "softmax":
        W, b = _fit_ovr(F, codes, k, l2, max_iter, rng, info)
        d_a = Y.shape[1]
        return VFLModel(W[:, :d_a], W[:, d_a:], b, classes, **extra)
    onehot = np.zeros((N, k))
    onehot[np.arange(N), codes] = 1.0
    theta0 = 1e-6 * np.random.default_rng(rng).standard_normal(k * (f + 1))
    W, b, _ = fit_softmax(F, onehot, np.full(N, 1.0 / N), l2, theta0, max_iter, info)
    d_a = Y.shape[1]
    return VFLModel(W[:, :d_a], W[:, d_a:], b, classes, **extra)


def _fit_ovr(F: np.ndarray, codes: np.ndarray, k: int, l2: float, max_iter: int, rng: Any,
             info: dict | None) -> tuple[np.ndarray, np.ndarray]:
    """One-vs-rest logistic regressions by L-BFGS (:func:`train_vfl_model`): rows ``(W, b)``,
    one per class, or one row (the second class against the first) for two classes."""
    N, f = F.shape
    from scipy.optimize import minimize  # here, not at import: an import does no work

    gen = np.random.default_rng(rng)
    targets = [codes == 1] if k == 2 else [codes == j for j in range(k)]
    W, b, iters = np.zeros((len(targets), f)), np.zeros(len(targets)), 0
    for j, t in enumerate(targets):
        s = np.where(t, 1.0, -1.0)

        def loss(theta, s=s):
            w, beta = theta[:f], theta[f]
            m = s * (F @ w + beta)
            value = np.mean(np.logaddexp(0.0, -m)) + 0.5 * l2 * (w @ w)
            g = -s * np.exp(-np.logaddexp(0.0, m)) / N     # d/dm log(1 + e^-m) = -sigmoid(-m)
            return value, np.concatenate([F.T @ g + l2 * w, [g.sum()]])

        sol = minimize(loss, 1e-6 * gen.standard_normal(f + 1), jac=True, method="L-BFGS-B",
                       options={"maxiter": int(max_iter), "gtol": 1e-9})
        W[j], b[j], iters = sol.x[:f], sol.x[f], iters + int(sol.nit)
    if info is not None:
        info["n_iter"] = iters
    return W, b
