"""Test helpers for litdata and for authors of litdata plugins.

Subclass the contract classes in your plugin's tests::

    from litdata.testing import SerializerContract

    class TestMySerializer(SerializerContract):
        serializer_class = MySerializer
        samples = [MyValue(1), MyValue(2)]
        bad_inputs = ["not mine"]
"""

from litdata.testing.compare import assert_samples_equal
from litdata.testing.contracts import CompressorContract, SerializerContract
from litdata.testing.distributions import fake_distribution

__all__ = [
    "CompressorContract",
    "SerializerContract",
    "assert_samples_equal",
    "fake_distribution",
]
