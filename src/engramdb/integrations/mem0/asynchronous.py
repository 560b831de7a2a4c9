"""``engramdb.AsyncMemory``: Mem0's ``AsyncMemory``, each call of ``Memory`` awaited in a worker thread."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from engramdb.integrations.mem0.memory import Memory


class AsyncMemory:
    """The same calls as ``Memory`` (same arguments, same answers), awaitable."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.sync = Memory(*args, **kwargs)

    @classmethod
    def from_config(cls, config_dict: Mapping[str, Any]) -> AsyncMemory:
        made = cls.__new__(cls)
        made.sync = Memory.from_config(config_dict)
        return made

    async def add(self, messages: Any, **kwargs: Any) -> dict[str, Any]:
        return await asyncio.to_thread(self.sync.add, messages, **kwargs)

    async def search(self, query: str, **kwargs: Any) -> dict[str, Any]:
        return await asyncio.to_thread(self.sync.search, query, **kwargs)

    async def get_all(self, **kwargs: Any) -> dict[str, Any]:
        return await asyncio.to_thread(self.sync.get_all, **kwargs)

    async def get(self, memory_id: str) -> dict[str, Any] | None:
        return await asyncio.to_thread(self.sync.get, memory_id)

    async def update(self, memory_id: str, text: str | None = None, **kwargs: Any) -> dict[str, Any]:
        return await asyncio.to_thread(self.sync.update, memory_id, text, **kwargs)

    async def delete(self, memory_id: str) -> dict[str, Any]:
        return await asyncio.to_thread(self.sync.delete, memory_id)

    async def delete_all(self, **kwargs: Any) -> dict[str, Any]:
        return await asyncio.to_thread(self.sync.delete_all, **kwargs)

    async def history(self, memory_id: str) -> list[dict[str, Any]]:
        return await asyncio.to_thread(self.sync.history, memory_id)

    async def reset(self) -> None:
        await asyncio.to_thread(self.sync.reset)

    def close(self) -> None:
        self.sync.close()

    async def __aenter__(self) -> AsyncMemory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()
