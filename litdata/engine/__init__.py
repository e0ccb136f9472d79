"""The engine: what turns the kernel's formats into bytes read and written.

Reader and writer, the chunk cache and prefetch, item encoding, storage backends resolved from
URLs (checked and retried), opening a dataset in whatever format it is. It imports the kernel
(``litdata.core``) and resolves plugins through its registries; nothing below imports it.
"""
