import pytest

from litdata.core.units import parse_size


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("64MB", 64_000_000),
        ("1kb", 1000),
        ("1.5g", 1_500_000_000),
        (" 2 TB ", 2 * 10**12),
        ("100b", 100),
        ("10K", 10_000),
    ],
)
def test_size_strings_use_decimal_units(text, expected):
    assert parse_size(text) == expected


def test_integers_are_bytes():
    assert parse_size(123) == 123


@pytest.mark.parametrize("bad", ["64", "MB", "64 parsecs", "-1MB", "0kb"])
def test_bad_strings_say_what_is_expected(bad):
    with pytest.raises(ValueError, match="chunk_bytes"):
        parse_size(bad, what="chunk_bytes")


@pytest.mark.parametrize("bad", [0, -5])
def test_sizes_must_be_positive(bad):
    with pytest.raises(ValueError, match="positive"):
        parse_size(bad)


@pytest.mark.parametrize("bad", [True, 1.5, None])
def test_other_types_are_refused(bad):
    with pytest.raises(TypeError):
        parse_size(bad)
