import pytest

from litdata.core import config


@pytest.mark.parametrize(("raw", "expected"), [(None, None), ("1", True), ("off", False)])
def test_a_flag_is_unset_on_or_off(monkeypatch, raw, expected):
    if raw is None:
        monkeypatch.delenv("LITDATA_TEST_FLAG", raising=False)
    else:
        monkeypatch.setenv("LITDATA_TEST_FLAG", raw)
    assert config.flag("LITDATA_TEST_FLAG", None) is expected


def test_a_flag_rejects_a_non_boolean(monkeypatch):
    monkeypatch.setenv("LITDATA_TEST_FLAG", "maybe")
    with pytest.raises(ValueError, match="LITDATA_TEST_FLAG='maybe'"):
        config.flag("LITDATA_TEST_FLAG", None)


def test_an_integer_has_a_default_a_floor_and_a_clear_error(monkeypatch):
    monkeypatch.delenv("LITDATA_TEST_INT", raising=False)
    assert config.integer("LITDATA_TEST_INT", 16) == 16
    monkeypatch.setenv("LITDATA_TEST_INT", "0")
    assert config.integer("LITDATA_TEST_INT", 16, minimum=1) == 1
    monkeypatch.setenv("LITDATA_TEST_INT", "x")
    with pytest.raises(ValueError, match="LITDATA_TEST_INT='x' is not an integer"):
        config.integer("LITDATA_TEST_INT", 16)


def test_an_empty_trace_categories_variable_leaves_the_level_in_charge(monkeypatch):
    """An exported but empty ``LITDATA_TRACE_CATEGORIES`` (a shell's ``export X=``) is unset."""
    monkeypatch.setenv("LITDATA_TRACE_LEVEL", "batch")
    monkeypatch.setenv("LITDATA_TRACE_CATEGORIES", "")
    monkeypatch.setenv("LITDATA_LOG_FILE", "batches.log")
    assert config.trace_settings() == ("batch", None, "batches.log")
