"""The change feed (a view over the audit log) and the webhooks that carry it to other systems."""
