"""Where agents already live: EngramDB inside other frameworks, all built on the SDK.

    target.py      what an integration calls: a server (``Client``) or this process (``engramdb.embedded``)
    mem0.py        ``engramdb.Memory``: a Mem0-style API (add, search, get_all, get, update, delete, history)
    langgraph.py   ``EngramStore``: LangGraph's ``BaseStore`` over EngramDB
    claude_code/   ``engram hook ...``: Claude Code's hooks (recall before a prompt, episodes after a turn)
    hermes/        the Hermes Agent memory provider and its installer

Like the SDK, none of them imports the server; ``engramdb.embedded`` is loaded only when no URL
is given.
"""
