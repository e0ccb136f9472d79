"""The torch-free core of litdata.

Format, index, pytree, serializer choice, writer, reader, registries, hooks and errors.
Importing it imports no optional dependency.
"""
