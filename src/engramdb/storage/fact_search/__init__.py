"""Structured fact search: current facts under a subject prefix, filtered on the JSON their text
holds, listed newest first or ranked by relevance (``port.py``), and the SQL both backends run
for it (``sql.py``); the ranking itself is the scope copy's (storage/scope_copy.py: ``rank``).
"""
