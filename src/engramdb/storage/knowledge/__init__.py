"""The knowledge plane's storage: records, their typed values, relationships, history, vectors.

One implementation for both backends (``graph.py`` over a ``Dialect``), since the statements
differ only in placeholders and PostgreSQL's tenant column; vector search is each backend's own.
"""
