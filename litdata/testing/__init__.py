"""Test helpers for litdata and for authors of litdata plugins.

Subclass the contract class of your plugin's kind in your plugin's tests::

    from litdata.testing import SerializerContract

    class TestMySerializer(SerializerContract):
        serializer_class = MySerializer
        samples = [MyValue(1), MyValue(2)]
        bad_inputs = ["not mine"]
"""

from litdata.testing.compare import assert_samples_equal
from litdata.testing.contracts import (
    CompressorContract,
    EncryptorContract,
    ExecutorContract,
    FormatContract,
    ItemLoaderContract,
    SerializerContract,
    ShuffleContract,
    StorageContract,
)
from litdata.testing.distributions import fake_distribution, rediscover

__all__ = [
    "CompressorContract",
    "EncryptorContract",
    "ExecutorContract",
    "FormatContract",
    "ItemLoaderContract",
    "SerializerContract",
    "ShuffleContract",
    "StorageContract",
    "assert_samples_equal",
    "fake_distribution",
    "rediscover",
]
