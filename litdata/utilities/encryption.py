"""``from litdata.utilities.encryption import FernetEncryption, RSAEncryption`` (LitData's path)."""

from litdata.plugins.encryption.fernet import FernetEncryption
from litdata.plugins.encryption.rsa import RSAEncryption

__all__ = ["FernetEncryption", "RSAEncryption"]
