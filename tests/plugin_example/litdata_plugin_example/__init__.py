"""An example litdata plugin: a ``fraction`` serializer and a ``bz2`` compressor."""
