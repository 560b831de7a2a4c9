"""Driver failures as EngramDB errors: the same condition is the same error on every backend.

Each backend classifies its driver's errors by code, never by message (SQLite extended result
codes in ``storage/sqlite/result_codes.py``, PostgreSQL SQLSTATEs in
``storage/postgres/sqlstates.py``), and this module turns the class into the error:

==============  =========================================  ===========================  =======================
failure         SQLite                                     PostgreSQL                   error
==============  =========================================  ===========================  =======================
``duplicate``   CONSTRAINT_UNIQUE, _PRIMARYKEY, _ROWID     23505 unique_violation       ConflictError 409
``unavailable`` BUSY, LOCKED, PROTOCOL (lock contention);  40001, 40P01, 55P03; class   BackendUnavailableError
                CANTOPEN (unreachable); FULL, NOMEM        08, 53, 57; no SQLSTATE      503, retryable
                                                           (refused, pool timeout)
``timeout``     (no statement timeout)                     57014 query_canceled         QueryTimeoutError 503,
                                                                                        Retry-After
``other``       anything else                              anything else                InternalError 500
==============  =========================================  ===========================  =======================

Messages are fixed and generic: no driver text, SQL, table name or driver code reaches a
client. Callers raise the error ``from`` the driver's, so the traceback still reaches the log.
"""

from __future__ import annotations

from typing import Literal

from engramdb.errors import BackendUnavailableError, ConflictError, EngramError, InternalError, QueryTimeoutError

Failure = Literal["duplicate", "unavailable", "timeout", "other"]
RETRY_TIMED_OUT = 5  # seconds a client is asked to wait before trying a timed-out request again


def storage_error(failure: Failure) -> EngramError:
    """Return the error a classified driver failure becomes."""
    if failure == "duplicate":
        return ConflictError("a record with this identity already exists")
    if failure == "unavailable":
        return BackendUnavailableError("the database is busy or cannot be reached; retry shortly")
    if failure == "timeout":
        return QueryTimeoutError(
            "a statement ran past the database's statement timeout and was cancelled; retry later, or ask for "
            "less (a narrower where, fewer conditions, no count)",
            retryAfterSeconds=RETRY_TIMED_OUT,
        )
    return InternalError("the storage backend failed; the server log has the details")
