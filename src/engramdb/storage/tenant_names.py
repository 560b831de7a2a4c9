"""What a tenant may be called: the name is a folder and a schema name on the backends."""

from __future__ import annotations

import re

from engramdb.errors import InvalidInputError

_TENANT_NAME = re.compile(r"[a-z0-9][a-z0-9-]{0,62}")


def check_tenant_name(name: str) -> str:
    """Return ``name`` if it is a valid tenant name, else raise InvalidInputError."""
    if not _TENANT_NAME.fullmatch(name):
        raise InvalidInputError(
            "tenant names are 1-63 characters of a-z, 0-9 and '-', starting with a letter or digit", field="tenant"
        )
    return name
