"""The server's models: requests, answers and views, a module per area."""

from engramdb.submodules import on_first_use

__getattr__ = on_first_use(__name__)  # the SDK's annotations name models by module (engramdb/submodules.py)
