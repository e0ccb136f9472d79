"""Built-in executors for ``optimize`` and ``map``."""
