"""Item encoding: sample structure (pytree), serializer choice, PyTree and token items."""
