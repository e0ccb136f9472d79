import pytest

from litdata.core import config


@pytest.mark.parametrize(("raw", "expected"), [(None, None), ("1", True), ("off", False)])
def test_posix_fast_is_unset_forced_or_off(monkeypatch, raw, expected):
    if raw is None:
        monkeypatch.delenv("LITDATA_POSIX_FAST", raising=False)
    else:
        monkeypatch.setenv("LITDATA_POSIX_FAST", raw)
    assert config.posix_fast() is expected


def test_posix_fast_rejects_a_non_boolean(monkeypatch):
    monkeypatch.setenv("LITDATA_POSIX_FAST", "maybe")
    with pytest.raises(ValueError, match="LITDATA_POSIX_FAST='maybe'"):
        config.posix_fast()
