"""Built-in chunk compressors."""
