"""Streaming datasets into training: the epoch plan, the dataset, the loader and its state."""
