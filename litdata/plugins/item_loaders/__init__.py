"""Built-in item loaders: how the items of a chunk are laid out and read back.

``PyTreeLoader``, ``TokensLoader`` and ``TemporalArrayLoader``; ``ParquetLoader`` lives with the
Parquet format.
"""
