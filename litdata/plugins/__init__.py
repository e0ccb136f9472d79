"""litdata's built-in plugins, declared in its pyproject exactly like a third party's."""
