"""Typed SDK methods for the aging operations, generated from ``engramdb.models.operations``.

Do not edit: run ``python -m engramdb.devtools.generate`` after changing the registry.
"""

# ruff: noqa: E501, F401 (mypy needs each model's module: through the package alone it reads Any)
from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from engramdb import contract, models
from engramdb.models.inputs import Inputs
from engramdb.models.operation import Operation
from engramdb.sdk.operations import inputs_for

# The models are annotations only, each named by its module: typing.get_type_hints imports it then (the
# packages' __getattr__), and an area's first call imports its operations, so the SDK imports none up front.
if TYPE_CHECKING:
    import engramdb.contract.events
    import engramdb.models.aging
    import engramdb.models.erasure
    import engramdb.models.memories

__all__ = ["AsyncAgingMethods", "Literal", "SyncAgingMethods"]

T = TypeVar("T")


class SyncAgingMethods:
    """The aging operations as blocking methods."""

    def call(self, op: Operation[T], inputs: Inputs) -> T:  # pragma: no cover - the client's
        raise NotImplementedError

    def forget_participant(self, body: models.erasure.ForgetRequest | Mapping[str, Any]) -> models.erasure.Forgotten:
        """Erase everything of one participant in the tenant (admin keys only); dryRun previews."""
        from engramdb.models.operations import aging as aging_ops

        return self.call(aging_ops.FORGET_PARTICIPANT, inputs_for(aging_ops.FORGET_PARTICIPANT, (), body, {}))

    def export_participant(
        self,
        *,
        scope: contract.events.ScopeFields | Mapping[str, Any] | None = None,
    ) -> models.erasure.ParticipantExport:
        """Everything of one participant in the tenant (admin keys only), as the lines engram import reads."""
        from engramdb.models.operations import aging as aging_ops

        return self.call(
            aging_ops.EXPORT_PARTICIPANT, inputs_for(aging_ops.EXPORT_PARTICIPANT, (), None, {"scope": scope})
        )

    def delete_episode(
        self,
        event_id: str,
        *,
        scope: contract.events.ScopeFields | Mapping[str, Any] | None = None,
        dry_run: bool = False,
    ) -> models.erasure.MemoryDeleted:
        """Delete an episode of the caller's scope without a trace (404 when the scope holds none); dryRun previews."""
        from engramdb.models.operations import aging as aging_ops

        return self.call(
            aging_ops.DELETE_EPISODE,
            inputs_for(aging_ops.DELETE_EPISODE, (event_id,), None, {"scope": scope, "dry_run": dry_run}),
        )

    def delete_fact(
        self,
        fact_id: str,
        *,
        scope: contract.events.ScopeFields | Mapping[str, Any] | None = None,
        dry_run: bool = False,
    ) -> models.erasure.MemoryDeleted:
        """Delete a fact with every version of it, without a trace (404 when the scope holds none); dryRun previews."""
        from engramdb.models.operations import aging as aging_ops

        return self.call(
            aging_ops.DELETE_FACT,
            inputs_for(aging_ops.DELETE_FACT, (fact_id,), None, {"scope": scope, "dry_run": dry_run}),
        )

    def mark_fact(self, fact_id: str, body: models.aging.MarkRequest | Mapping[str, Any]) -> models.aging.MemoryMarks:
        """Pin a fact or set its importance (a person's keys: host, reviewer, admin); pinned facts never archive."""
        from engramdb.models.operations import aging as aging_ops

        return self.call(aging_ops.MARK_FACT, inputs_for(aging_ops.MARK_FACT, (fact_id,), body, {}))

    def mark_episode(
        self,
        event_id: str,
        body: models.aging.MarkRequest | Mapping[str, Any],
    ) -> models.aging.MemoryMarks:
        """Set an episode's importance (a person's keys); at the policy's protectImportance it is never archived."""
        from engramdb.models.operations import aging as aging_ops

        return self.call(aging_ops.MARK_EPISODE, inputs_for(aging_ops.MARK_EPISODE, (event_id,), body, {}))

    def archive_fact(
        self,
        fact_id: str,
        body: models.aging.ArchiveRequest | Mapping[str, Any],
    ) -> models.memories.MemoryView:
        """Archive a current fact now, saying why (a person's keys; audited); restore_fact brings it back."""
        from engramdb.models.operations import aging as aging_ops

        return self.call(aging_ops.ARCHIVE_FACT, inputs_for(aging_ops.ARCHIVE_FACT, (fact_id,), body, {}))

    def archive_episode(
        self,
        event_id: str,
        body: models.aging.ArchiveRequest | Mapping[str, Any],
    ) -> models.memories.MemoryView:
        """Archive an episode now, saying why (a person's keys; audited); restore_episode brings it back."""
        from engramdb.models.operations import aging as aging_ops

        return self.call(aging_ops.ARCHIVE_EPISODE, inputs_for(aging_ops.ARCHIVE_EPISODE, (event_id,), body, {}))

    def restore_fact(
        self,
        fact_id: str,
        body: models.aging.RestoreRequest | Mapping[str, Any] | None = None,
    ) -> models.memories.MemoryView:
        """Bring an archived fact back into recall (audited); 409 unless it is archived or if its slot has a current value."""
        from engramdb.models.operations import aging as aging_ops

        return self.call(aging_ops.RESTORE_FACT, inputs_for(aging_ops.RESTORE_FACT, (fact_id,), body, {}))

    def restore_episode(
        self,
        event_id: str,
        body: models.aging.RestoreRequest | Mapping[str, Any] | None = None,
    ) -> models.memories.MemoryView:
        """Bring an archived episode back into recall (audited); 409 unless it is archived."""
        from engramdb.models.operations import aging as aging_ops

        return self.call(aging_ops.RESTORE_EPISODE, inputs_for(aging_ops.RESTORE_EPISODE, (event_id,), body, {}))

    def list_jobs(self) -> models.aging.JobList:
        """The server's background jobs: last run, next run, what each did and its last error."""
        from engramdb.models.operations import aging as aging_ops

        return self.call(aging_ops.LIST_JOBS, inputs_for(aging_ops.LIST_JOBS, (), None, {}))

    def run_aging(self) -> models.aging.AgingRun:
        """Run the aging sweep of the caller's tenant now (archive, retention); admin keys only."""
        from engramdb.models.operations import aging as aging_ops

        return self.call(aging_ops.RUN_AGING, inputs_for(aging_ops.RUN_AGING, (), None, {}))


class AsyncAgingMethods:
    """The aging operations as coroutine methods."""

    async def call(self, op: Operation[T], inputs: Inputs) -> T:  # pragma: no cover - the client's
        raise NotImplementedError

    async def forget_participant(
        self,
        body: models.erasure.ForgetRequest | Mapping[str, Any],
    ) -> models.erasure.Forgotten:
        """Erase everything of one participant in the tenant (admin keys only); dryRun previews."""
        from engramdb.models.operations import aging as aging_ops

        return await self.call(aging_ops.FORGET_PARTICIPANT, inputs_for(aging_ops.FORGET_PARTICIPANT, (), body, {}))

    async def export_participant(
        self,
        *,
        scope: contract.events.ScopeFields | Mapping[str, Any] | None = None,
    ) -> models.erasure.ParticipantExport:
        """Everything of one participant in the tenant (admin keys only), as the lines engram import reads."""
        from engramdb.models.operations import aging as aging_ops

        return await self.call(
            aging_ops.EXPORT_PARTICIPANT, inputs_for(aging_ops.EXPORT_PARTICIPANT, (), None, {"scope": scope})
        )

    async def delete_episode(
        self,
        event_id: str,
        *,
        scope: contract.events.ScopeFields | Mapping[str, Any] | None = None,
        dry_run: bool = False,
    ) -> models.erasure.MemoryDeleted:
        """Delete an episode of the caller's scope without a trace (404 when the scope holds none); dryRun previews."""
        from engramdb.models.operations import aging as aging_ops

        return await self.call(
            aging_ops.DELETE_EPISODE,
            inputs_for(aging_ops.DELETE_EPISODE, (event_id,), None, {"scope": scope, "dry_run": dry_run}),
        )

    async def delete_fact(
        self,
        fact_id: str,
        *,
        scope: contract.events.ScopeFields | Mapping[str, Any] | None = None,
        dry_run: bool = False,
    ) -> models.erasure.MemoryDeleted:
        """Delete a fact with every version of it, without a trace (404 when the scope holds none); dryRun previews."""
        from engramdb.models.operations import aging as aging_ops

        return await self.call(
            aging_ops.DELETE_FACT,
            inputs_for(aging_ops.DELETE_FACT, (fact_id,), None, {"scope": scope, "dry_run": dry_run}),
        )

    async def mark_fact(
        self,
        fact_id: str,
        body: models.aging.MarkRequest | Mapping[str, Any],
    ) -> models.aging.MemoryMarks:
        """Pin a fact or set its importance (a person's keys: host, reviewer, admin); pinned facts never archive."""
        from engramdb.models.operations import aging as aging_ops

        return await self.call(aging_ops.MARK_FACT, inputs_for(aging_ops.MARK_FACT, (fact_id,), body, {}))

    async def mark_episode(
        self,
        event_id: str,
        body: models.aging.MarkRequest | Mapping[str, Any],
    ) -> models.aging.MemoryMarks:
        """Set an episode's importance (a person's keys); at the policy's protectImportance it is never archived."""
        from engramdb.models.operations import aging as aging_ops

        return await self.call(aging_ops.MARK_EPISODE, inputs_for(aging_ops.MARK_EPISODE, (event_id,), body, {}))

    async def archive_fact(
        self,
        fact_id: str,
        body: models.aging.ArchiveRequest | Mapping[str, Any],
    ) -> models.memories.MemoryView:
        """Archive a current fact now, saying why (a person's keys; audited); restore_fact brings it back."""
        from engramdb.models.operations import aging as aging_ops

        return await self.call(aging_ops.ARCHIVE_FACT, inputs_for(aging_ops.ARCHIVE_FACT, (fact_id,), body, {}))

    async def archive_episode(
        self,
        event_id: str,
        body: models.aging.ArchiveRequest | Mapping[str, Any],
    ) -> models.memories.MemoryView:
        """Archive an episode now, saying why (a person's keys; audited); restore_episode brings it back."""
        from engramdb.models.operations import aging as aging_ops

        return await self.call(aging_ops.ARCHIVE_EPISODE, inputs_for(aging_ops.ARCHIVE_EPISODE, (event_id,), body, {}))

    async def restore_fact(
        self,
        fact_id: str,
        body: models.aging.RestoreRequest | Mapping[str, Any] | None = None,
    ) -> models.memories.MemoryView:
        """Bring an archived fact back into recall (audited); 409 unless it is archived or if its slot has a current value."""
        from engramdb.models.operations import aging as aging_ops

        return await self.call(aging_ops.RESTORE_FACT, inputs_for(aging_ops.RESTORE_FACT, (fact_id,), body, {}))

    async def restore_episode(
        self,
        event_id: str,
        body: models.aging.RestoreRequest | Mapping[str, Any] | None = None,
    ) -> models.memories.MemoryView:
        """Bring an archived episode back into recall (audited); 409 unless it is archived."""
        from engramdb.models.operations import aging as aging_ops

        return await self.call(aging_ops.RESTORE_EPISODE, inputs_for(aging_ops.RESTORE_EPISODE, (event_id,), body, {}))

    async def list_jobs(self) -> models.aging.JobList:
        """The server's background jobs: last run, next run, what each did and its last error."""
        from engramdb.models.operations import aging as aging_ops

        return await self.call(aging_ops.LIST_JOBS, inputs_for(aging_ops.LIST_JOBS, (), None, {}))

    async def run_aging(self) -> models.aging.AgingRun:
        """Run the aging sweep of the caller's tenant now (archive, retention); admin keys only."""
        from engramdb.models.operations import aging as aging_ops

        return await self.call(aging_ops.RUN_AGING, inputs_for(aging_ops.RUN_AGING, (), None, {}))
