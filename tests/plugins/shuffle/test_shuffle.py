"""The built-in shuffle strategies pass the shuffle contract."""

from litdata.plugins.shuffle.full import FullShuffle
from litdata.plugins.shuffle.none import NoShuffle
from litdata.plugins.shuffle.window import WindowShuffle
from litdata.testing import ShuffleContract


class TestNoShuffle(ShuffleContract):
    shuffle_class = NoShuffle
    reorders = False


class TestFullShuffle(ShuffleContract):
    shuffle_class = FullShuffle


class TestWindowShuffle(ShuffleContract):
    shuffle_class = WindowShuffle
    options = {"size": 4}
