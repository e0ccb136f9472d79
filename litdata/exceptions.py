"""``from litdata.exceptions import ChunkWaitTimeoutError`` (LitData's import path)."""

from litdata.core.errors import ChunkWaitTimeoutError

__all__ = ["ChunkWaitTimeoutError"]
