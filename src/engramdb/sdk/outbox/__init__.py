"""The durable outbox: ``Outbox`` (delivery) over ``OutboxStore`` (the SQLite file).

``python -m engramdb.sdk.outbox list|replay|deliver --profile DIR`` inspects and replays it.
"""

from engramdb.sdk.outbox.delivery import Outbox, OutboxSettings, entry_call
from engramdb.sdk.outbox.store import DeadLetter, Entry, OutboxStore, SessionState

__all__ = ["DeadLetter", "Entry", "Outbox", "OutboxSettings", "OutboxStore", "SessionState", "entry_call"]
