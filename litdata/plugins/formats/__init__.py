"""Built-in dataset formats."""
