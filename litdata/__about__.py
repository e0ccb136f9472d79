"""Package metadata, kept apart so it can be read without importing anything heavy."""

__version__ = "0.3.0.dev0"
