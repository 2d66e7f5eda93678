"""Read the models VFL frameworks export, as a :class:`~vflattack.model.VFLModel` with its link
and parties (docs/vflattack.md, "Reading what the frameworks export").

=====================  ===========================================  ==========================
export                 API                                          ``--model`` spelling
=====================  ===========================================  ==========================
vflattack model file   :meth:`VFLModel.load`                        ``model.json``
FATE 2.x CoordinatedLR :func:`from_fate`                            ``fate:GUEST.json,HOST.json``
SecretFlow-Serving     :func:`from_secretflow_serving`              ``secretflow:A.tar.gz,B.tar.gz``
linear bottom models   :func:`from_linear_npz`                      ``npz:BOTTOMS.npz``
scikit-learn           :meth:`VFLModel.from_sklearn` (the object)   (a pickle: refused, below)
=====================  ===========================================  ==========================

:func:`read_model` takes the CLI's spelling, or a bare path whose type it detects from the
content (not the name). **Nothing is ever unpickled**: unpickling runs whatever code the file
names, so a pickle (FATE 1.x's merged scikit-learn export, a joblib dump) is refused with an
error that says how to load it yourself if you made the file or trust it.
"""

from __future__ import annotations

import pathlib
import zipfile
from typing import Any

import numpy as np

from .._validate import InvalidInputError
from ..model import VFLModel

__all__ = ["from_fate", "from_linear_npz", "from_secretflow_serving", "read_model", "refuse_pickle"]

#: the first bytes of the formats :func:`read_model` tells apart
_ZIP, _GZIP = b"PK\x03\x04", b"\x1f\x8b"


def _pickle_error(path: Any, what: str) -> InvalidInputError:
    return InvalidInputError(
        f"model {str(path)!r} is {what}: vflattack never unpickles a file, because unpickling runs whatever "
        f"code the file names. If you made this file or trust its source, load it yourself "
        f"(`import joblib; clf = joblib.load(path)`, or `pickle.load`) and pass the estimator to "
        f"VFLModel.from_sklearn(clf, passive_columns); then VFLModel.save writes a JSON model file the CLI reads")


#: the opcodes a protocol 0 or 1 pickle of an object opens with: MARK, GLOBAL, EMPTY_DICT,
#: EMPTY_LIST, EMPTY_TUPLE (``pickletools``); a JSON file, a zip or a gzip opens with none of them
_OLD_PICKLE_STARTS = b"(c}])"
#: the most of a file read to tell an old-protocol pickle (a model pickle is far smaller)
_PICKLE_SCAN = 64 << 20


def _looks_pickled(head: bytes) -> bool:
    """A pickle of protocol 2..5 (``\\x80`` then the protocol byte)."""
    return len(head) >= 2 and head[0] == 0x80 and 2 <= head[1] <= 5


def _is_old_pickle(path: Any, head: bytes) -> bool:
    """A pickle of protocol 0 or 1: the whole file parses as pickle opcodes up to STOP.
    ``pickletools.genops`` reads the opcodes only; it builds no object and imports nothing."""
    import pickletools

    if not head or head[:1] not in [bytes([c]) for c in _OLD_PICKLE_STARTS]:
        return False
    try:
        with open(path, "rb") as fh:
            data = fh.read(_PICKLE_SCAN + 1)
        if len(data) > _PICKLE_SCAN:
            return False
        ops = [op.name for op, _arg, _pos in pickletools.genops(data)]
        return bool(ops) and ops[-1] == "STOP"
    except Exception:   # noqa: BLE001 - any parse failure means "not a pickle"; nothing was executed
        return False


def _head(path: Any, n: int, what: str) -> bytes:
    """The first ``n`` bytes of ``path``; raises if the file is a pickle (any protocol)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(n)
    except OSError as exc:
        raise InvalidInputError(f"{what} {str(path)!r} cannot be read: {exc}") from None
    if _looks_pickled(head) or _is_old_pickle(path, head):
        raise _pickle_error(path, "a Python pickle")
    return head


def refuse_pickle(path: Any) -> None:
    """Raise if ``path`` holds a Python pickle (checked on its first bytes, never loaded).

    Examples
    --------
    >>> import pickle, tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "clf.pkl"
    >>> _ = p.write_bytes(pickle.dumps({"coef_": [1.0]}))
    >>> refuse_pickle(p)
    Traceback (most recent call last):
    ...
    vflattack._errors.InvalidInputError: model '...clf.pkl' is a Python pickle: vflattack never unpickles ...
    """
    _head(path, 4, "model")


def from_linear_npz(path: Any, *, precision: str | None = None, active: str | None = None) -> VFLModel:
    """Linear bottom models (one ``weight``/``bias`` pair per party) as an identity-link model.

    The file is a NumPy ``.npz`` holding, for each party ``NAME``, ``NAME.weight`` (m_p x d_p)
    and ``NAME.bias`` (m_p): the keys a PyTorch ``nn.Linear``'s ``state_dict`` has, prefixed
    by the party's name. What is published is every party's embedding ``W_p x_p + b_p`` (the
    outputs stacked in the file's order), as in Flower's vertical example: the identity link
    with a block-diagonal ``W_pas``. From PyTorch, the three lines are::

        import numpy as np
        bottoms = {"client1": model1, "client2": model2, "client3": model3}   # nn.Linear each
        np.savez("bottoms.npz", **{f"{p}.{k}": v.detach().cpu().numpy()
                                   for p, m in bottoms.items() for k, v in m.state_dict().items()})

    The party named ``active`` (or the one ``active=`` names) is the active party's own bottom
    model: its features are known to the adversary. ``precision`` defaults to ``float32``
    when the arrays are float32 (torch's default: the embeddings were computed in float32),
    else ``float64``. The file is read with ``allow_pickle=False``.

    Examples
    --------
    >>> import numpy as np, tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "bottoms.npz"
    >>> np.savez(p, **{"c1.weight": np.ones((2, 3), np.float32), "c1.bias": np.zeros(2, np.float32),
    ...                "c2.weight": np.eye(2, dtype=np.float32), "c2.bias": np.ones(2, np.float32)})
    >>> m = from_linear_npz(p)
    >>> m.link, m.precision, m.party_names, m.W_pas.shape
    ('identity', 'float32', ('c1', 'c2'), (4, 5))
    """
    if not _head(path, 4, "model").startswith(_ZIP):
        raise InvalidInputError(f"model {str(path)!r} is not an .npz file (a zip archive of NAME.weight and NAME.bias "
                                f"arrays, as np.savez writes)")
    try:
        with open(path, "rb") as fh, np.load(fh, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    except ValueError as exc:
        if "allow_pickle" in str(exc):
            raise _pickle_error(path, "an .npz holding pickled objects") from None
        raise InvalidInputError(f"model {str(path)!r} is not a readable .npz file: {exc}") from None
    except (OSError, EOFError, zipfile.BadZipFile) as exc:
        raise InvalidInputError(f"model {str(path)!r} is not a readable .npz file: {exc}") from None
    parties: dict[str, dict[str, np.ndarray]] = {}
    for key, val in arrays.items():
        name, dot, kind = key.rpartition(".")
        if not dot or kind not in ("weight", "bias") or not name:
            raise InvalidInputError(f"model {str(path)!r}: key {key!r} is not NAME.weight or NAME.bias (one pair "
                                    f"per party, as an nn.Linear's state_dict prefixed by the party's name)")
        parties.setdefault(name, {})[kind] = val
    if not parties:
        raise InvalidInputError(f"model {str(path)!r} holds no NAME.weight / NAME.bias pair")
    layered: dict[str, list[str]] = {}
    for name in parties:
        stem, dot, idx = name.rpartition(".")
        if dot and idx.isdigit():
            layered.setdefault(stem, []).append(name)
    def chained(names):   # layer i's outputs feed layer i + 1's inputs: one bottom model's stack
        Ws = [parties[n].get("weight") for n in sorted(names, key=lambda n: int(n.rpartition(".")[2]))]
        return all(getattr(a, "ndim", 0) == 2 and getattr(b, "ndim", 0) == 2 and b.shape[1] == a.shape[0]
                   for a, b in zip(Ws, Ws[1:]))

    # stem.0, stem.2, ... whose shapes chain are an nn.Sequential's layers; a ModuleList of
    # per-party bottom models (bottoms.0, bottoms.1, shapes that do not chain) are parties
    layered = {stem: names for stem, names in layered.items() if len(names) > 1 and chained(names)}
    if layered:
        stem, names = next(iter(layered.items()))
        raise InvalidInputError(
            f"model {str(path)!r} holds several layers of one bottom model ({', '.join(names)}: an nn.Sequential's "
            f"state_dict), which would be read as {len(names)} parties. vflattack audits linear bottom models, one "
            f"weight and bias per party. Linear layers with nothing between them are one linear map: save "
            f"W = W2 @ W1 and b = W2 @ b1 + b2 as {stem}.weight and {stem}.bias; a bottom model with an activation "
            f"between its layers is not linear and cannot be audited this way")
    active = "active" if active is None and "active" in parties else active
    if active is not None and active not in parties:
        raise InvalidInputError(f"active must name a party of {str(path)!r} ({sorted(parties)}); got {active!r}")
    if active is not None and len(parties) == 1:
        raise InvalidInputError(f"model {str(path)!r} holds only the active party {active!r}: no passive party")
    blocks = []
    for name, pair in parties.items():
        missing = {"weight", "bias"} - set(pair)
        if missing:
            raise InvalidInputError(f"model {str(path)!r}: party {name!r} has no {name}.{missing.pop()}")
        W, b = pair["weight"], pair["bias"]
        if W.ndim != 2 or b.shape != (W.shape[0],):
            raise InvalidInputError(f"model {str(path)!r}: party {name!r} must have weight (m, d) and bias (m,), "
                                    f"as nn.Linear; got {W.shape} and {b.shape}")
        if not (np.issubdtype(W.dtype, np.floating) and np.issubdtype(b.dtype, np.floating)):
            raise InvalidInputError(f"model {str(path)!r}: party {name!r} must hold floating-point arrays; got "
                                    f"{W.dtype} and {b.dtype}")
        blocks.append((name, W, b))
    if precision is None:
        precision = "float32" if all(W.dtype == np.float32 for _, W, _ in blocks) else "float64"
    m = sum(W.shape[0] for _, W, _ in blocks)
    act = [blk for blk in blocks if blk[0] == active]
    pas = [blk for blk in blocks if blk[0] != active]
    d_a = sum(W.shape[1] for _, W, _ in act)
    d = sum(W.shape[1] for _, W, _ in pas)
    W_act, W_pas, bias = np.zeros((m, d_a)), np.zeros((m, d)), np.zeros(m)
    row = col_a = col_p = 0
    cols = []
    for name, W, b in blocks:
        r = slice(row, row + W.shape[0])
        if name == active:
            W_act[r, col_a:col_a + W.shape[1]] = W
            col_a += W.shape[1]
        else:
            W_pas[r, col_p:col_p + W.shape[1]] = W
            cols.append(list(range(col_p, col_p + W.shape[1])))
            col_p += W.shape[1]
        bias[r] = b
        row += W.shape[0]
    return VFLModel(W_act, W_pas, bias, link="identity", precision=precision, parties=cols,
                    party_names=[name for name, _, _ in pas])


def __getattr__(name: str):
    if name == "from_fate":
        from .fate import from_fate

        return from_fate
    if name == "from_secretflow_serving":
        from .secretflow import from_secretflow_serving

        return from_secretflow_serving
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _split_spec(spec: str) -> tuple[str | None, list[str]]:
    kind, sep, rest = spec.partition(":")
    if sep and kind.lower() in _READERS and len(kind) > 1:  # "C:\\..." is a drive, not a kind
        return kind.lower(), [p for p in rest.split(",") if p]
    return None, [spec]


def _detect(path: str) -> str:
    """The kind of a model file, from its first bytes."""
    head = _head(path, 512, "--model")
    if pathlib.Path(path).suffix.lower() in (".pkl", ".pickle", ".joblib", ".sav"):
        raise _pickle_error(path, f"named as a pickle ({pathlib.Path(path).suffix})")
    if head.startswith(_ZIP):
        return "npz"
    if head.startswith(_GZIP) or _is_tar(path):
        return "secretflow"
    text = head.lstrip()
    if text.startswith(b"{"):
        if b"vflattack.VFLModel" in _read_bytes(path):
            return "vflattack"
        return "fate"
    raise InvalidInputError(f"--model {path!r} is not a model file vflattack reads (a vflattack or FATE JSON "
                            f"model, a SecretFlow-Serving package, an .npz of linear bottom models); name its "
                            f"kind: fate:GUEST,HOST..., secretflow:PKG..., npz:FILE")


def _read_bytes(path: str) -> bytes:
    with open(path, "rb") as fh:
        return fh.read()


def _is_tar(path: str) -> bool:
    import tarfile

    try:
        return tarfile.is_tarfile(path)
    except OSError:
        return False


def _read_vflattack(paths: list[str]) -> VFLModel:
    if len(paths) != 1:
        raise InvalidInputError(f"a vflattack model is one file; got {len(paths)}: {paths}")
    return VFLModel.load(paths[0])


def _read_fate(paths: list[str]) -> VFLModel:
    from .fate import from_fate

    if len(paths) < 2:
        raise InvalidInputError(f"fate: needs the guest's model file and at least one host's (fate:GUEST,HOST...); "
                                f"got {paths}")
    return from_fate(paths[0], paths[1:])


def _read_secretflow(paths: list[str]) -> VFLModel:
    from .secretflow import from_secretflow_serving

    return from_secretflow_serving(paths)


def _read_npz(paths: list[str]) -> VFLModel:
    if len(paths) != 1:
        raise InvalidInputError(f"npz: takes one file holding every party's weight and bias; got {paths}")
    return from_linear_npz(paths[0])


_READERS = {"vflattack": _read_vflattack, "fate": _read_fate, "secretflow": _read_secretflow, "npz": _read_npz}


def read_model(spec: Any) -> VFLModel:
    """The model the CLI's ``--model`` names: ``KIND:PATH[,PATH...]`` or one path.

    ``KIND`` is ``fate`` (the guest's model, then each host's), ``secretflow`` (each party's
    SecretFlow-Serving package), ``npz`` (linear bottom models) or ``vflattack`` (a file of
    :meth:`VFLModel.save`). A bare path's kind is detected from its content; a FATE export
    of several files needs its kind and every file. A pickle is refused (module docstring).
    """
    if isinstance(spec, pathlib.Path):
        spec = str(spec)
    if not isinstance(spec, str) or not spec.strip():
        raise InvalidInputError(f"--model must be a path or KIND:PATH[,PATH...]; got {spec!r}")
    kind, paths = _split_spec(spec.strip())
    if kind is None:
        if "," in paths[0] and not pathlib.Path(paths[0]).exists():
            raise InvalidInputError(f"--model {spec!r}: several files need their kind first (fate:GUEST,HOST, "
                                    f"secretflow:PKG1,PKG2)")
        kind = _detect(paths[0])
        if kind == "fate":
            raise InvalidInputError(f"--model {spec!r} looks like one party's FATE model; FATE exports each party's "
                                    f"half on its own: give the guest's and every host's, as fate:GUEST.json,HOST.json")
    for p in paths:
        refuse_pickle(p)
    return _READERS[kind](paths)
