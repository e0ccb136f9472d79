"""Dataset conversion: ``optimize`` (samples into chunks) and ``map`` (files into files).

The driver splits the inputs, an executor plugin runs the workers, each worker writes its own
chunks, and the driver merges their indexes into ``index.json``, atomically and last.
"""
