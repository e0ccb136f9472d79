"""The hostile-input suite: datasets crafted by an attacker or a clumsy user.

Every index field, shard name, size and compressed frame comes from someone else's bucket.
Each test feeds one such dataset to the public API and checks that the answer is a clear
``DatasetFormatError``/``ChunkCorruptError``/``StorageError`` naming the file or URL, or the
right samples; never another exception, wrong samples, a write or delete outside the dataset
and cache folders, or an unbounded allocation. Each records a row of the fault table
(:mod:`fault_table`), which ``make faults`` prints.
"""

from support.fault_table import pytest_configure, pytest_terminal_summary, record  # noqa: F401
