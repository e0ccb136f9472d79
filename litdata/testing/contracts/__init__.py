"""Contract test classes, one per plugin kind: every plugin, built-in or not, passes its own.

They are plain pytest classes (fixture-driven, like fsspec's abstract test suites); subclass
one in your plugin's tests and set its class attributes or fixtures.
"""

from litdata.testing.contracts.compressor import CompressorContract
from litdata.testing.contracts.encryptor import EncryptorContract
from litdata.testing.contracts.executor import ExecutorContract
from litdata.testing.contracts.format import FormatContract
from litdata.testing.contracts.item_loader import ItemLoaderContract
from litdata.testing.contracts.serializer import SerializerContract
from litdata.testing.contracts.shuffle import ShuffleContract
from litdata.testing.contracts.storage import StorageContract

__all__ = [
    "CompressorContract",
    "EncryptorContract",
    "ExecutorContract",
    "FormatContract",
    "ItemLoaderContract",
    "SerializerContract",
    "ShuffleContract",
    "StorageContract",
]
