"""Typed SDK methods for the assist operations, generated from ``engramdb.models.operations``.

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
    import engramdb.models.assist
    import engramdb.models.derive

__all__ = ["AsyncAssistMethods", "Literal", "SyncAssistMethods"]

T = TypeVar("T")


class SyncAssistMethods:
    """The assist operations as blocking methods."""

    def call(self, op: Operation[T], inputs: Inputs) -> T:  # pragma: no cover - the client's
        raise NotImplementedError

    def extract(self, body: models.assist.ExtractRequest | Mapping[str, Any]) -> models.assist.ExtractResult:
        """Extract facts from turns or stored episodes now, judge them against current facts, write them derived."""
        from engramdb.models.operations import assist as assist_ops

        return self.call(assist_ops.EXTRACT, inputs_for(assist_ops.EXTRACT, (), body, {}))

    def queue_extraction(self, body: models.assist.ExtractRequest | Mapping[str, Any]) -> models.assist.AssistJobView:
        """Queue an extraction for the background workers (202); the job's state is visible at once."""
        from engramdb.models.operations import assist as assist_ops

        return self.call(assist_ops.QUEUE_EXTRACTION, inputs_for(assist_ops.QUEUE_EXTRACTION, (), body, {}))

    def list_assist_jobs(
        self,
        *,
        scope: contract.events.ScopeFields | Mapping[str, Any] | None = None,
        state: Literal["queued", "running", "done", "failed"] | None = None,
        limit: int = 50,
    ) -> models.assist.AssistJobList:
        """Queued, running, finished and failed model jobs, newest first (of the scopes the key may read)."""
        from engramdb.models.operations import assist as assist_ops

        return self.call(
            assist_ops.LIST_ASSIST_JOBS,
            inputs_for(assist_ops.LIST_ASSIST_JOBS, (), None, {"scope": scope, "state": state, "limit": limit}),
        )

    def get_assist_job(self, job_id: str) -> models.assist.AssistJobView:
        """One model job: its state, attempts, last error and, once done, its result."""
        from engramdb.models.operations import assist as assist_ops

        return self.call(assist_ops.GET_ASSIST_JOB, inputs_for(assist_ops.GET_ASSIST_JOB, (job_id,), None, {}))

    def assist_usage(self, *, since: str | None = None, recent: int = 20) -> models.assist.AssistUsage:
        """The tenant's model calls: tokens, cost and time per purpose, the latest calls, the queue (reviewer or admin keys)."""
        from engramdb.models.operations import assist as assist_ops

        return self.call(
            assist_ops.ASSIST_USAGE, inputs_for(assist_ops.ASSIST_USAGE, (), None, {"since": since, "recent": recent})
        )

    def fact_links(
        self,
        fact_id: str,
        *,
        scope: contract.events.ScopeFields | Mapping[str, Any] | None = None,
    ) -> models.assist.FactLinks:
        """Links a model's work made from or to a fact: verdicts with reasons, consolidations, evidence."""
        from engramdb.models.operations import assist as assist_ops

        return self.call(assist_ops.FACT_LINKS, inputs_for(assist_ops.FACT_LINKS, (fact_id,), None, {"scope": scope}))

    def reflect(self, body: models.derive.ReflectRequest | Mapping[str, Any]) -> models.derive.ReflectResult:
        """Write reflections (derived, reviewable) over a subject's or a time range's current, stated facts."""
        from engramdb.models.operations import assist as assist_ops

        return self.call(assist_ops.REFLECT, inputs_for(assist_ops.REFLECT, (), body, {}))

    def consolidate(
        self,
        body: models.derive.ConsolidateRequest | Mapping[str, Any],
    ) -> models.derive.ConsolidateResult:
        """Merge near-duplicate current facts of one slot into one; the originals are retired as consolidated."""
        from engramdb.models.operations import assist as assist_ops

        return self.call(assist_ops.CONSOLIDATE, inputs_for(assist_ops.CONSOLIDATE, (), body, {}))

    def undo_consolidation(
        self,
        fact_id: str,
        body: models.derive.UndoConsolidation | Mapping[str, Any],
    ) -> models.derive.UndoneConsolidation:
        """Undo a consolidation: the merged fact is archived and its originals are current again (audited)."""
        from engramdb.models.operations import assist as assist_ops

        return self.call(assist_ops.UNDO_CONSOLIDATION, inputs_for(assist_ops.UNDO_CONSOLIDATION, (fact_id,), body, {}))

    def add(
        self,
        messages: models.derive.AddRequest | Mapping[str, Any] | list[models.derive.Message] | list[dict[str, Any]],
        *,
        scope: contract.events.ScopeFields | Mapping[str, Any] | None = None,
        infer: bool = True,
        session_id: str | None = None,
    ) -> models.derive.AddResult:
        """Store chat messages as episodes and (infer) extract and judge facts from them, Mem0-style."""
        from engramdb.models.operations import assist as assist_ops

        return self.call(
            assist_ops.ADD,
            inputs_for(assist_ops.ADD, (), messages, {"scope": scope, "infer": infer, "session_id": session_id}),
        )


class AsyncAssistMethods:
    """The assist operations as coroutine methods."""

    async def call(self, op: Operation[T], inputs: Inputs) -> T:  # pragma: no cover - the client's
        raise NotImplementedError

    async def extract(self, body: models.assist.ExtractRequest | Mapping[str, Any]) -> models.assist.ExtractResult:
        """Extract facts from turns or stored episodes now, judge them against current facts, write them derived."""
        from engramdb.models.operations import assist as assist_ops

        return await self.call(assist_ops.EXTRACT, inputs_for(assist_ops.EXTRACT, (), body, {}))

    async def queue_extraction(
        self,
        body: models.assist.ExtractRequest | Mapping[str, Any],
    ) -> models.assist.AssistJobView:
        """Queue an extraction for the background workers (202); the job's state is visible at once."""
        from engramdb.models.operations import assist as assist_ops

        return await self.call(assist_ops.QUEUE_EXTRACTION, inputs_for(assist_ops.QUEUE_EXTRACTION, (), body, {}))

    async def list_assist_jobs(
        self,
        *,
        scope: contract.events.ScopeFields | Mapping[str, Any] | None = None,
        state: Literal["queued", "running", "done", "failed"] | None = None,
        limit: int = 50,
    ) -> models.assist.AssistJobList:
        """Queued, running, finished and failed model jobs, newest first (of the scopes the key may read)."""
        from engramdb.models.operations import assist as assist_ops

        return await self.call(
            assist_ops.LIST_ASSIST_JOBS,
            inputs_for(assist_ops.LIST_ASSIST_JOBS, (), None, {"scope": scope, "state": state, "limit": limit}),
        )

    async def get_assist_job(self, job_id: str) -> models.assist.AssistJobView:
        """One model job: its state, attempts, last error and, once done, its result."""
        from engramdb.models.operations import assist as assist_ops

        return await self.call(assist_ops.GET_ASSIST_JOB, inputs_for(assist_ops.GET_ASSIST_JOB, (job_id,), None, {}))

    async def assist_usage(self, *, since: str | None = None, recent: int = 20) -> models.assist.AssistUsage:
        """The tenant's model calls: tokens, cost and time per purpose, the latest calls, the queue (reviewer or admin keys)."""
        from engramdb.models.operations import assist as assist_ops

        return await self.call(
            assist_ops.ASSIST_USAGE, inputs_for(assist_ops.ASSIST_USAGE, (), None, {"since": since, "recent": recent})
        )

    async def fact_links(
        self,
        fact_id: str,
        *,
        scope: contract.events.ScopeFields | Mapping[str, Any] | None = None,
    ) -> models.assist.FactLinks:
        """Links a model's work made from or to a fact: verdicts with reasons, consolidations, evidence."""
        from engramdb.models.operations import assist as assist_ops

        return await self.call(
            assist_ops.FACT_LINKS, inputs_for(assist_ops.FACT_LINKS, (fact_id,), None, {"scope": scope})
        )

    async def reflect(self, body: models.derive.ReflectRequest | Mapping[str, Any]) -> models.derive.ReflectResult:
        """Write reflections (derived, reviewable) over a subject's or a time range's current, stated facts."""
        from engramdb.models.operations import assist as assist_ops

        return await self.call(assist_ops.REFLECT, inputs_for(assist_ops.REFLECT, (), body, {}))

    async def consolidate(
        self,
        body: models.derive.ConsolidateRequest | Mapping[str, Any],
    ) -> models.derive.ConsolidateResult:
        """Merge near-duplicate current facts of one slot into one; the originals are retired as consolidated."""
        from engramdb.models.operations import assist as assist_ops

        return await self.call(assist_ops.CONSOLIDATE, inputs_for(assist_ops.CONSOLIDATE, (), body, {}))

    async def undo_consolidation(
        self,
        fact_id: str,
        body: models.derive.UndoConsolidation | Mapping[str, Any],
    ) -> models.derive.UndoneConsolidation:
        """Undo a consolidation: the merged fact is archived and its originals are current again (audited)."""
        from engramdb.models.operations import assist as assist_ops

        return await self.call(
            assist_ops.UNDO_CONSOLIDATION, inputs_for(assist_ops.UNDO_CONSOLIDATION, (fact_id,), body, {})
        )

    async def add(
        self,
        messages: models.derive.AddRequest | Mapping[str, Any] | list[models.derive.Message] | list[dict[str, Any]],
        *,
        scope: contract.events.ScopeFields | Mapping[str, Any] | None = None,
        infer: bool = True,
        session_id: str | None = None,
    ) -> models.derive.AddResult:
        """Store chat messages as episodes and (infer) extract and judge facts from them, Mem0-style."""
        from engramdb.models.operations import assist as assist_ops

        return await self.call(
            assist_ops.ADD,
            inputs_for(assist_ops.ADD, (), messages, {"scope": scope, "infer": infer, "session_id": session_id}),
        )
