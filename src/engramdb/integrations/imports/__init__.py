"""Imports: conversations kept by other products, as EngramDB episodes (``engram import SOURCE FILE``).

    from engramdb.integrations.imports import import_file
    from engramdb.sdk import Client

    with Client("http://127.0.0.1:8377", api_key=KEY) as engram:
        report = import_file(engram, "chatgpt", "conversations.json", scope={"userId": "alice"})

Sources: ``claude-code`` (a session transcript, JSONL), ``chatgpt`` (the data export's
``conversations.json``), ``mem0`` (what ``get_all`` returns), ``zep`` (Zep or Graphiti episodes) and
``jsonl`` (plain chat messages or turns). Each reader says what it reads; ``turns.py`` what a turn
becomes; ``running.py`` how it is written: through ``write_episode_batch``, 100 at a time.
"""

from engramdb.integrations.imports.running import SOURCES, ImportReport, import_file

__all__ = ["SOURCES", "ImportReport", "import_file"]
