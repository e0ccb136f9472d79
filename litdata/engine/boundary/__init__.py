"""The plugin boundary: every plugin the engine uses is resolved and checked here.

``options`` resolves a setting (``"name:value"``) to a plugin, ``checked`` wraps what each kind
returns in checks, ``resolve`` turns a path or URL into a ``Location`` with its backend, and
``storage`` is that backend as the engine uses it, checked, retried, with bounded waits.
"""
