"""``chunks``: litdata's native format (LitData's ``index.json`` + chunk files)."""
