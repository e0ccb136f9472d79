"""litdata's exceptions and warning, for ``except litdata.errors.ChunkCorruptError:``.

Every error litdata raises is a :class:`LitdataError`, and also the builtin a caller would
expect (``DatasetNotFoundError`` is a ``FileNotFoundError``, ``SampleError`` a ``TypeError``),
so ``except`` clauses written for LitData keep working. The same names are attributes of
``litdata`` itself (``litdata.ChunkCorruptError``).

The pages ``docs/api.md`` (each class and when it is raised) and ``docs/migration.md``
(LitData's exception types) list them.
"""

from __future__ import annotations

from litdata.core import errors as _errors
from litdata.core.errors import *  # noqa: F403  # the same classes, under this name

__all__ = list(_errors.__all__)
