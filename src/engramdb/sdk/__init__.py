"""The EngramDB SDK: clients, the durable outbox and ``MemorySession`` for agent hosts.

client.py      Client and AsyncClient over httpx, built from operations.py
operations.py  every REST endpoint once, as a Call (request + typed reader)
errors.py      SDK errors and the problem-JSON -> exception mapping
outbox/        the durable SQLite outbox and its CLI (python -m engramdb.sdk.outbox)
host.py        HostContext and the fail-closed eligibility verdict
capture.py     capture rules: latest pair, redaction, bounds
recall.py      the recent-write cache, merging, the recall outcome
session.py     MemorySession, the lifecycle hooks
writing.py     what a write queues: the event, or its body while the participant is unresolved
"""

from engramdb.contract.canonical import hash_scope
from engramdb.sdk.client import AsyncClient, Client
from engramdb.sdk.errors import (
    ClientRequestError,
    MalformedEntryError,
    OutboxFullError,
    RateLimitedError,
    RequestTimeoutError,
    ServerError,
    TransportError,
)
from engramdb.sdk.host import HostContext
from engramdb.sdk.outbox import Outbox, OutboxSettings
from engramdb.sdk.recall import RecallOutcome
from engramdb.sdk.session import MemorySession

__all__ = [
    "AsyncClient",
    "Client",
    "ClientRequestError",
    "HostContext",
    "MalformedEntryError",
    "MemorySession",
    "Outbox",
    "OutboxFullError",
    "OutboxSettings",
    "RateLimitedError",
    "RecallOutcome",
    "RequestTimeoutError",
    "ServerError",
    "TransportError",
    "hash_scope",
]
