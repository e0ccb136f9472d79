"""The kernel of litdata: what a plugin author reads, and what every other layer builds on.

The protocols plugins satisfy, the registries and hooks that find them, ``index.json`` and the
chunk layout, ``Location``, errors and configuration. It is torch-free, imports no optional
dependency, and resolves no plugin (see docs/architecture.md).
"""
