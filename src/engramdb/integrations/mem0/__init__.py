"""``engramdb.Memory`` and ``engramdb.AsyncMemory``: Mem0's API over EngramDB (embedded, or a server).

    from engramdb import Memory                    # instead of: from mem0 import Memory
    m = Memory()                                   # this process, data in ENGRAM_HOME or ./.engram
    m = Memory("http://127.0.0.1:8377", api_key=HOST_KEY, agent_id="support")   # a server
    m.add([{"role": "user", "content": "I'm vegetarian"}], user_id="alice", infer=False)
    m.search("what does alice eat?", filters={"user_id": "alice"}, top_k=5)

    memory.py        the writes (add, update, delete, delete_all, reset), from_config
    reads.py         search, get_all, get, history, in both of Mem0's call styles
    shapes.py        Mem0's result and history shapes; a memory is a lineage of fact versions
    filters.py       Mem0's filters and their operators
    store.py         the EngramDB operations behind them, and how Mem0's ids map to scopes
    asynchronous.py  AsyncMemory

What matches Mem0 and what differs, and why: docs/integrations.md (Mem0).
"""

from engramdb.integrations.mem0.asynchronous import AsyncMemory
from engramdb.integrations.mem0.filters import Mem0InputError
from engramdb.integrations.mem0.memory import Memory
from engramdb.integrations.mem0.reads import MemoryNotFoundError

__all__ = ["AsyncMemory", "Mem0InputError", "Memory", "MemoryNotFoundError"]
