"""Where a command runs: on the data folder (as the machine's operator) or against a server.

Local commands work on the data folder directly (``--home`` or ``ENGRAM_HOME``) as the operator
of the machine, which is why they need no key; everything they change is audited all the same.
With ``--url`` (or ``ENGRAM_URL``) and ``--key`` (or ``ENGRAM_KEY``) the same command asks a
running server instead, as that key.
"""

from __future__ import annotations

import getpass
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel

from engramdb.config import Settings
from engramdb.contract.canonical import hash_scope
from engramdb.errors import InvalidInputError, NotFoundError
from engramdb.models.inputs import Inputs
from engramdb.models.operation import Operation

if TYPE_CHECKING:  # the server's parts load when a command runs on the data folder, not to start the CLI
    from engramdb.core.service import MemoryService
    from engramdb.storage.port import Store

DEFAULT_TENANT = "default"


def local_scope() -> dict[str, Any]:
    """The scope the CLI uses on the data folder when none is named: this machine's user's."""
    return {
        "agentId": "cli",
        "profileId": "default",
        "privacyScope": "private",
        "participantScopeHash": hash_scope(["local", getpass.getuser()]),
        "sandboxEligible": False,
    }


def open_local_store(home: str | None) -> Store:
    from engramdb.storage.registry import open_store

    settings = settings_for(home)
    return open_store(settings.storage_url(), **settings.store_options())


def settings_for(home: str | None) -> Settings:
    return Settings(home=Path(home)) if home is not None else Settings()


class Target(Protocol):
    """Where an operation runs."""

    remote: bool

    def call(self, op: Operation[Any], inputs: Inputs) -> BaseModel | None: ...

    def close(self) -> None: ...


@dataclass
class Local:
    """The data folder, as the operator of the machine (an admin of ``tenant`` with no key)."""

    home: str | None
    tenant: str
    create_tenant: bool = False
    remote = False

    def __post_init__(self) -> None:
        self.settings = settings_for(self.home)
        self._service: MemoryService | None = None

    def service(self, op: Operation[Any]) -> MemoryService:
        if self._service is None:
            from engramdb.core.embedder_choice import resolve_spec
            from engramdb.core.embedding import make_embedder
            from engramdb.core.service import MemoryService
            from engramdb.storage.registry import open_store

            store = open_store(self.settings.storage_url(), **self.settings.store_options())
            # Commands that never embed use the hashing embedder, so they do not load the model.
            needs_model = op.cli is not None and (op.cli.embeds_locally or op.cli.needs_model)
            spec = resolve_spec(self.settings.embedder, store) if needs_model else "hashing"
            self._service = MemoryService(
                store, make_embedder(spec, api_key=self.settings.embedder_api_key), self.settings
            )
        return self._service

    def call(self, op: Operation[Any], inputs: Inputs) -> BaseModel | None:
        from engramdb.core.auth import Caller
        from engramdb.core.operations import run
        from engramdb.jobs.embedding import drain

        service = self.service(op)
        policy = op.cli.tenant if op.cli else "existing"
        # A write may start the default tenant (as `serve` does); any other name only when asked,
        # so that a misspelt --tenant is refused instead of becoming a tenant.
        if self.create_tenant or (policy == "create" and self.tenant == DEFAULT_TENANT):
            service.shared.store.tenant(self.tenant, create=True)
        caller = Caller(self.tenant, "local-cli", "admin", operator=True)
        try:
            answer = run(service, op, None if op.public else caller, inputs)
        except NotFoundError as error:
            if error.field != "tenant":
                raise
            where = (self.settings.database_url and "the configured database") or str(self.settings.home.resolve())
            hint = "; pass --create-tenant to create it" if policy != "existing" else ""
            raise NotFoundError(
                f"{error.message}{hint} (looked in {where}: the data folder is --home or ENGRAM_HOME)", field="--tenant"
            ) from error
        if op.cli is not None and op.cli.embeds_locally:
            drain(service.shared.store.tenant(self.tenant), service.shared.embedder)
        return answer

    def close(self) -> None:
        if self._service is not None:
            self._service.shared.store.close()


class Remote:
    """A running server, as the key given."""

    remote = True

    def __init__(self, url: str, key: str | None) -> None:
        from engramdb.sdk.client import Client

        self.key = key
        self.client = Client(url, key)

    def call(self, op: Operation[Any], inputs: Inputs) -> BaseModel | None:
        if not self.key and not op.public:
            raise InvalidInputError("--url needs a key: pass --key or set ENGRAM_KEY", field="--key")
        answer: BaseModel | None = self.client.call(op, inputs)
        return answer

    def close(self) -> None:
        self.client.close()
