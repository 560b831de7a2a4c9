"""The change feed (a view over the audit log) and its webhooks' endpoints and outbox.

One implementation for both backends over a ``Dialect``, as the knowledge plane's.
"""
