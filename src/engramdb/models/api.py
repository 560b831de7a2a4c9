"""Request and response shapes shared by REST, the SDK, MCP and the CLI, in one namespace.

The models live by subject (``memories``, ``lifecycle``, ``recall``, ``admin``, ``policy``,
``problems``); this module gathers them. No FastAPI, MCP or storage imports anywhere in
``engramdb.models``: the SDK depends on it without the server.
"""

from __future__ import annotations

from engramdb.models.admin import (
    AuditPage,
    AuditQuery,
    AuditVerdict,
    AuditView,
    Health,
    KeyCreated,
    KeyCreateRequest,
    KeyList,
    KeyView,
    Role,
)
from engramdb.models.assist import (
    CallView,
    DerivedItem,
    ExtractRequest,
    ExtractResult,
    FactLinks,
    LinkView,
    ModelJobList,
    ModelJobQuery,
    ModelJobView,
    ModelUsage,
    PurposeUsage,
    TurnInput,
    UsageQuery,
    UsageView,
    VerdictView,
)
from engramdb.models.base import (
    DEFAULT_LIMIT,
    MAX_LIMIT,
    QueryModel,
    ResponseModel,
    ScopeQuery,
    ScopeView,
)
from engramdb.models.derive import (
    AddOptions,
    AddRequest,
    AddResult,
    ConsolidateRequest,
    ConsolidateResult,
    ConsolidationGroup,
    Message,
    ReflectRequest,
    ReflectResult,
    UndoConsolidation,
    UndoneConsolidation,
)
from engramdb.models.lifecycle import (
    CorrectRequest,
    EditAndApprove,
    FactHistory,
    LiftRequest,
    RejectDecision,
    RetractRequest,
    ReviewDecision,
    ReviewItem,
    ReviewQuery,
    ReviewQueue,
    TombstoneList,
    TombstoneQuery,
    TombstoneView,
)
from engramdb.models.memories import (
    EmbeddingStatus,
    EpisodeBatch,
    EpisodeBatchResult,
    EpisodeList,
    EpisodeQuery,
    FactList,
    FactQuery,
    MemoryQuery,
    MemoryView,
    WriteOptions,
    WriteResponse,
)
from engramdb.models.policy import TenantPolicy, TrustRule
from engramdb.models.problems import FieldProblem, Problem
from engramdb.models.recall import (
    ArmExplain,
    Explain,
    RecalledMemory,
    RecalledSession,
    RecallRequest,
    RecallResponse,
)
from engramdb.models.scopes import ScopeList, ScopeListQuery, ScopeSummary

__all__ = [
    "DEFAULT_LIMIT", "MAX_LIMIT", "AddOptions", "AddRequest", "AddResult", "ArmExplain", "AuditPage", "AuditQuery",
    "AuditVerdict", "AuditView", "CallView", "ConsolidateRequest", "ConsolidateResult", "ConsolidationGroup",
    "CorrectRequest", "DerivedItem", "EditAndApprove", "EmbeddingStatus", "EpisodeBatch", "EpisodeBatchResult",
    "EpisodeList", "EpisodeQuery", "Explain", "ExtractRequest", "ExtractResult", "FactHistory", "FactLinks",
    "FactList", "FactQuery", "FieldProblem", "Health", "KeyCreateRequest", "KeyCreated", "KeyList", "KeyView",
    "LiftRequest", "LinkView", "MemoryQuery", "MemoryView", "Message", "ModelJobList", "ModelJobQuery", "ModelJobView",
    "ModelUsage", "Problem", "PurposeUsage", "QueryModel", "RecallRequest", "RecallResponse", "RecalledMemory",
    "RecalledSession", "ReflectRequest", "ReflectResult", "RejectDecision", "ResponseModel", "RetractRequest",
    "ReviewDecision", "ReviewItem", "ReviewQuery", "ReviewQueue", "Role", "ScopeList", "ScopeListQuery", "ScopeQuery",
    "ScopeSummary", "ScopeView", "TenantPolicy", "TombstoneList", "TombstoneQuery", "TombstoneView", "TrustRule",
    "TurnInput", "UndoConsolidation", "UndoneConsolidation", "UsageQuery", "UsageView", "VerdictView", "WriteOptions",
    "WriteResponse",
]  # fmt: skip
