"""A dataset from an untrusted bucket cannot run code in the training job."""

import datetime
import decimal
import os
import pickle
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest

import litdata as ld
from litdata.core.errors import UnsafeDataError
from litdata.plugins.serializers.pickle import PickleSerializer, restricted_loads


class Exploit:
    def __reduce__(self):
        return (os.system, ("echo pwned > /tmp/litdata-pwned",))


@pytest.mark.parametrize(
    "value",
    [
        None,
        complex(1, 2),
        {1, 2},
        frozenset({3}),
        (1, [2, {"a": b"x"}]),
        bytearray(b"ab"),
        datetime.datetime(2024, 1, 2, 3, 4),
        decimal.Decimal("1.5"),
        np.int64(7),
        np.float32(0.5),
        np.bool_(True),
        np.array([[1, 2]]),
        range(3),
        Fraction(2, 3),
    ],
    ids=repr,
)
def test_plain_values_load_without_opt_in(value):
    loaded = restricted_loads(pickle.dumps(value))
    assert repr(loaded) == repr(value)


def test_a_pickle_that_would_run_code_is_refused_with_how_to_opt_in(tmp_path):
    ld.write_dataset([{"id": 1, "payload": Exploit()}], tmp_path, chunk_size=2)
    with pytest.raises(UnsafeDataError) as caught:
        ld.DatasetReader(tmp_path)[0]
    message = str(caught.value)
    assert "posix.system" in message or "os.system" in message
    assert "allow_pickle=True" in message
    assert "LITDATA_ALLOW_PICKLE=1" in message
    assert not os.path.exists("/tmp/litdata-pwned")


def test_opting_in_loads_classes(tmp_path, monkeypatch):
    ld.write_dataset([{"counts": Counter("aab")}], tmp_path, chunk_size=2)
    with pytest.raises(UnsafeDataError, match="collections.Counter"):
        ld.DatasetReader(tmp_path)[0]
    assert ld.DatasetReader(tmp_path, allow_pickle=True)[0] == {"counts": Counter("aab")}
    monkeypatch.setenv("LITDATA_ALLOW_PICKLE", "1")
    assert ld.DatasetReader(tmp_path)[0] == {"counts": Counter("aab")}


def test_bad_env_value_is_an_error(monkeypatch, tmp_path):
    monkeypatch.setenv("LITDATA_ALLOW_PICKLE", "maybe")
    ld.write_dataset([None], tmp_path, chunk_size=2)
    with pytest.raises(ValueError, match="LITDATA_ALLOW_PICKLE='maybe'"):
        ld.DatasetReader(tmp_path)


def test_an_explicit_allow_pickle_never_reads_the_environment(monkeypatch, tmp_path):
    ld.write_dataset([{"counts": Counter("aab")}], tmp_path, chunk_size=2)
    monkeypatch.setenv("LITDATA_ALLOW_PICKLE", "maybe")
    assert ld.DatasetReader(tmp_path, allow_pickle=True)[0] == {"counts": Counter("aab")}


def test_a_standalone_pickle_serializer_reads_the_environment_once(monkeypatch):
    payload, _ = PickleSerializer().serialize(Counter("ab"))
    monkeypatch.setenv("LITDATA_ALLOW_PICKLE", "1")
    serializer = PickleSerializer()
    assert serializer.deserialize(payload) == Counter("ab")
    monkeypatch.setenv("LITDATA_ALLOW_PICKLE", "maybe")  # no longer read
    assert serializer.deserialize(payload) == Counter("ab")
    with pytest.raises(UnsafeDataError):
        PickleSerializer(allow_pickle=False).deserialize(payload)
