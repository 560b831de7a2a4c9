"""The tenant's secret participant salt (issue 20): what a ``userId`` is hashed with.

Made on first use under the write lock (two first users agree), audited, kept in the tenant's
meta table and exported with it, never answered. One implementation for both backends, over
their transactions' ``get_meta``/``put_meta``.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol

from engramdb.audit_chain.states import value_digest

if TYPE_CHECKING:
    from engramdb.storage.rows import AuditDraft

SALT_KEY = "participant_salt"


class ParticipantSalts(Protocol):
    def participant_salt(self, audit: AuditDraft) -> str:
        """Return the tenant's secret participant salt, made (and audited) on first use."""
        ...


class ParticipantSaltStore:
    """``participant_salt`` for a tenant store whose ``transaction()`` has get_meta, put_meta, audit."""

    transaction: Callable[[], AbstractContextManager[Any]]

    def participant_salt(self, audit: AuditDraft) -> str:
        with self.transaction() as tx:
            found = tx.get_meta(SALT_KEY)
            if found is not None:
                return str(found)
            salt = secrets.token_hex(32)
            tx.put_meta(SALT_KEY, salt)
            tx.audit(replace(audit, after_digest=value_digest(salt)))  # a digest of 256 random bits: no oracle
            return salt
