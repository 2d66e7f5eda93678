"""vflattack's errors.

:class:`VflattackError` is the base of every error vflattack raises itself. Bad input is a
:class:`InvalidInputError`: a ``ValueError``, and also a
:class:`chebcenter.InvalidInputError`, so that one ``except`` clause catches bad input to
either package (an audit passes the caller's arrays on to chebcenter). A dataset that is
missing, cannot be downloaded or fails its checksum is a :class:`DatasetError`, an
``OSError``; it stays a ``ValueError`` for the callers that caught it as bad input.
"""

from __future__ import annotations

import chebcenter

__all__ = ["DatasetError", "InvalidInputError", "UnreadableReleaseWarning", "VflattackError"]


class VflattackError(Exception):
    """Base class of the errors vflattack raises."""


class InvalidInputError(VflattackError, chebcenter.InvalidInputError):
    """An argument has the wrong shape, type or value (the message names it, says what is
    required and what was received)."""


class DatasetError(VflattackError, ValueError, OSError):
    """A dataset file is missing, cannot be downloaded, or fails its checksum."""


class UnreadableReleaseWarning(UserWarning):
    """Most rows of a batch are not valid under the release named for it: the audit cannot
    model what was published (the message says which release kinds fit the data instead)."""
