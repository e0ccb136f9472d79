"""The plugin machinery: entry-point discovery, typed registries, pluggy hooks."""
