"""Webhook secrets: made by the server, shown once, never stored.

HMAC needs the secret itself on the server at every delivery, so a hash of it would not do. Each
endpoint's secret is derived instead: HMAC-SHA256 of the endpoint (tenant, id and a random salt)
under a server key kept in a file beside the data (``webhooks.key``, mode 0600, 32 random bytes).
The database holds the salt and a digest that recognises the secret, so a copy of the database
(a dump, a backup, a replica) signs nothing; whoever reads the key file and the database can.
Changing the key file changes every secret: deliveries stop, saying so, until the endpoints are
registered again.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import secrets
from pathlib import Path

PREFIX = "whsec_"


class KeyFile:
    """The server's webhook key, read from its file (made the first time it is needed)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._key: bytes | None = None

    def key(self) -> bytes:
        if self._key is None:
            if not self.path.exists():
                self._create()
            self._key = bytes.fromhex(self.path.read_text().strip())
        return self._key

    def _create(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        draft = self.path.with_name(f".{self.path.name}.{secrets.token_hex(4)}")
        fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(secrets.token_hex(32))
        try:  # a link appears whole or not at all; if another process made the file first, use theirs
            os.link(draft, self.path)
        except FileExistsError:
            pass
        finally:
            draft.unlink()

    def secret(self, tenant: str, webhook_id: str, salt: str) -> str:
        """Return an endpoint's signing secret."""
        message = "\x1f".join(("engramdb-webhook", tenant, webhook_id, salt)).encode()
        raw = hmac.new(self.key(), message, hashlib.sha256).digest()
        return PREFIX + base64.urlsafe_b64encode(raw).decode().rstrip("=")


def new_salt() -> str:
    return secrets.token_hex(16)


def check_of(secret: str) -> str:
    """What the database keeps to recognise a secret (a digest: the secret cannot be had back from it)."""
    return hashlib.sha256(secret.encode()).hexdigest()


def fingerprint(check: str) -> str:
    """What listings show of a secret, to tell which one an endpoint holds."""
    return check[:12]
