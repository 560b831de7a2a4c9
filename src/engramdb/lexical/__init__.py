"""Words as FTS5 makes them, and BM25 over them: the text analysis both core and storage use.

``porter`` is FTS5's stemmer; ``index`` tokenises, keeps a process-wide ``Vocabulary`` and a
scope's ``LexicalIndex``. Pure, no I/O.
"""
