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
from engramdb.models.base import (
    DEFAULT_LIMIT,
    MAX_LIMIT,
    QueryModel,
    ResponseModel,
    ScopeQuery,
    ScopeView,
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
from engramdb.models.scopes import ScopeList, ScopeListQuery, ScopeResolution, ScopeSummary

__all__ = [
    "DEFAULT_LIMIT", "MAX_LIMIT", "ArmExplain", "AuditPage", "AuditQuery", "AuditVerdict", "AuditView",
    "CorrectRequest", "EditAndApprove", "EmbeddingStatus", "EpisodeBatch", "EpisodeBatchResult", "EpisodeList",
    "EpisodeQuery", "Explain", "FactHistory", "FactList", "FactQuery", "FieldProblem", "Health", "KeyCreateRequest",
    "KeyCreated", "KeyList", "KeyView", "LiftRequest", "MemoryQuery", "MemoryView", "Problem", "QueryModel",
    "RecallRequest", "RecallResponse", "RecalledMemory", "RecalledSession", "RejectDecision", "ResponseModel",
    "RetractRequest", "ReviewDecision", "ReviewItem", "ReviewQuery", "ReviewQueue", "Role", "ScopeList",
    "ScopeListQuery", "ScopeQuery", "ScopeResolution", "ScopeSummary", "ScopeView", "TenantPolicy", "TombstoneList",
    "TombstoneQuery", "TombstoneView", "TrustRule", "WriteOptions", "WriteResponse",
]  # fmt: skip
