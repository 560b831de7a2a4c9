"""RushDB's AgentMemoryEvent v1 contract: its events, bounds and canonical forms."""

from engramdb.submodules import on_first_use

__getattr__ = on_first_use(__name__)  # the SDK's annotations name models by module (engramdb/submodules.py)
