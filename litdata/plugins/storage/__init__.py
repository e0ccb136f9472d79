"""Built-in storage backends, keyed by URL scheme."""
