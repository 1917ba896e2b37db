"""The one exception hierarchy of the raglens core; only the CLI and the app turn these into exits."""

from __future__ import annotations


class RaglensError(Exception):
    """A problem the user can act on; its message says what went wrong and what to do."""

    exit_code: int = 2


class BadInputError(RaglensError):
    """A path, parameter or file that raglens cannot use as given."""


class NothingIndexableError(RaglensError):
    """The input holds no file that raglens can index."""

    exit_code = 3


class CacheUnwritableError(RaglensError):
    """The cache had to be changed (``raglens cache clear``) and could not be written."""

    exit_code = 4


class CacheUnreadableError(RaglensError):
    """The cache had to be read (``raglens cache info``) and could not be: exit 4, as clear's failure."""

    exit_code = 4


class ModelLoadError(RaglensError):
    """The embedding model could not be loaded."""


class EmbeddingProcessGone(ModelLoadError):
    """The embedding process ended (it crashed or was killed) before it answered."""


class OutputUnwritableError(RaglensError):
    """stdout is closed, or writing the results to it failed (a full disk, an I/O error)."""

    exit_code = 5
