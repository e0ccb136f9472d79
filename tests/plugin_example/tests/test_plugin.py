"""The example plugin's own tests: it subclasses litdata's contract classes."""

from fractions import Fraction

from litdata_plugin_example.bz2 import Bz2Compressor
from litdata_plugin_example.fraction import FractionSerializer

from litdata.testing import CompressorContract, SerializerContract


class TestFractionSerializer(SerializerContract):
    serializer_class = FractionSerializer
    samples = [Fraction(1, 3), Fraction(-7, 2), Fraction(0), Fraction(10**30, 3)]
    bad_inputs = [0.5, "1/3", None]


class TestBz2Compressor(CompressorContract):
    compressor_class = Bz2Compressor
    levels = [1, 5, 9]
    bad_levels = [0, 10]
