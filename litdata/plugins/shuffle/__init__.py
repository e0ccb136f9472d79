"""Built-in shuffle strategies: ``none``, ``full`` and ``window``."""
