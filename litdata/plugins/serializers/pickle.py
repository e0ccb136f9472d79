"""The fallback serializer: ``pickle``, read back through a restricted unpickler.

Plain values (``None``, numbers, strings, bytes, containers of them, ``complex``, sets,
dates, ``Decimal``, numpy scalars and arrays) load as usual. A pickle that would import or
call anything else could run arbitrary code from the dataset, so it is refused unless the
reader opts in with ``allow_pickle=True`` (or ``LITDATA_ALLOW_PICKLE=1``).
"""

from __future__ import annotations

import io
import pickle
from typing import Any, ClassVar

from litdata.core import config
from litdata.core.errors import UnsafeDataError

__all__ = ["SAFE_GLOBALS", "PickleSerializer", "restricted_loads"]

#: What a pickle may reference without ``allow_pickle``: constructors of plain values only.
SAFE_GLOBALS = frozenset(
    {
        ("builtins", "complex"),
        ("builtins", "set"),
        ("builtins", "frozenset"),
        ("builtins", "slice"),
        ("builtins", "range"),
        ("builtins", "bytearray"),
        ("builtins", "bytes"),
        ("builtins", "int"),
        ("builtins", "float"),
        ("builtins", "str"),
        ("builtins", "bool"),
        ("builtins", "list"),
        ("builtins", "tuple"),
        ("builtins", "dict"),
        ("_codecs", "encode"),
        ("collections", "OrderedDict"),
        ("collections", "deque"),
        ("datetime", "date"),
        ("datetime", "datetime"),
        ("datetime", "time"),
        ("datetime", "timedelta"),
        ("datetime", "timezone"),
        ("decimal", "Decimal"),
        ("fractions", "Fraction"),
        ("uuid", "UUID"),
        ("numpy", "dtype"),
        ("numpy", "ndarray"),
        ("numpy.core.multiarray", "_reconstruct"),
        ("numpy.core.multiarray", "scalar"),
        ("numpy._core.multiarray", "_reconstruct"),
        ("numpy._core.multiarray", "scalar"),
        ("numpy.core.numeric", "_frombuffer"),
        ("numpy._core.numeric", "_frombuffer"),
    }
)


class _RestrictedUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in SAFE_GLOBALS:
            return super().find_class(module, name)
        raise UnsafeDataError(
            f"A pickled value in this dataset needs {module}.{name}, and unpickling it could run "
            f"arbitrary code from the dataset. If you trust where the dataset comes from, read "
            f"it with allow_pickle=True (e.g. StreamingDataset(..., allow_pickle=True)) or set "
            f"LITDATA_ALLOW_PICKLE=1."
        )


def restricted_loads(data: bytes | memoryview) -> Any:
    """Unpickle ``data`` allowing only plain values (see ``SAFE_GLOBALS``).

    Raises:
        UnsafeDataError: The pickle references anything else.
    """
    return _RestrictedUnpickler(io.BytesIO(data)).load()


class PickleSerializer:
    """Anything picklable; the last resort when no other serializer claims a leaf.

    Args:
        allow_pickle: Let pickles import code when read; ``None`` follows
            ``LITDATA_ALLOW_PICKLE``. Readers set this from the dataset's ``allow_pickle``.
    """

    name: ClassVar[str] = "pickle"
    types: ClassVar[tuple[str, ...]] = ("builtins.object",)
    priority: ClassVar[int] = 0

    def __init__(self, allow_pickle: bool | None = None) -> None:
        self.allow_pickle = allow_pickle

    def can_serialize(self, item: Any) -> bool:
        """Claims everything."""
        return True

    def serialize(self, item: Any) -> tuple[bytes, None]:
        """``pickle.dumps`` at the highest protocol."""
        try:
            return pickle.dumps(item, protocol=pickle.HIGHEST_PROTOCOL), None
        except Exception as error:
            raise TypeError(f"it cannot be pickled ({error})") from error

    def deserialize(self, data: bytes | memoryview) -> Any:
        """The unpickled value; only plain values unless ``allow_pickle``."""
        if self.allow_pickle is None:  # read on first use: writers never need it
            self.allow_pickle = config.allow_pickle_default()
        if self.allow_pickle:
            return pickle.loads(data)  # the reader opted in
        return restricted_loads(data)

    def setup(self, data_format: str) -> None:
        """Nothing to prepare."""
