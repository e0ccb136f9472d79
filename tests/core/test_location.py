"""``Location.read_ends``: what a format sniffs of a large file, without reading all of it."""

from __future__ import annotations

import pytest

from litdata.engine.boundary.resolve import resolve


def test_the_ends_of_a_file_and_of_a_short_one(tmp_path):
    (tmp_path / "big").write_bytes(b"head" + b"." * 10_000 + b"tail")
    (tmp_path / "small").write_bytes(b"abc")
    location = resolve(str(tmp_path))
    assert location.read_ends("big", 4) == (b"head", b"tail")
    assert location.read_ends("small", 8) == (b"abc", b"abc")
    with pytest.raises(FileNotFoundError):
        location.read_ends("missing", 4)
