"""Built-in encryption: ``fernet`` (password-derived, LitData's) and ``rsa`` (hybrid)."""
