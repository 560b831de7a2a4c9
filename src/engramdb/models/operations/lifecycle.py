"""A fact's lifecycle: correcting, retracting, its history, and the tombstones that refuse a value."""

from __future__ import annotations

from engramdb.models.lifecycle import (
    CorrectRequest,
    FactHistory,
    FactHistoryQuery,
    LiftRequest,
    RetractRequest,
    TombstoneList,
    TombstoneQuery,
    TombstoneView,
)
from engramdb.models.memories import (
    MemoryView,
    WriteOptions,
    WriteResponse,
)
from engramdb.models.operation import Cli, Mcp, McpArg, Operation
from engramdb.models.operations.common import (
    FACT_ID,
    FACT_IDS,
    MCP_FACT_ID,
    MCP_REASON,
    proposed,
)

CORRECT_FACT = Operation(
    name="correct_fact",
    method="POST",
    path="/v1/facts/{fact_id}/correct",
    tag="lifecycle",
    output=WriteResponse,
    permission="memory.write",
    body=CorrectRequest,
    query=WriteOptions,
    path_params=FACT_ID,
    created_status=True,
    status=201,
    errors=(404, 409),
    example={"text": "The user prefers PostgreSQL for backend projects.", "reason": "the user switched"},
    summary="Replace a current fact with a corrected one; the old value is tombstoned.",
    description="The correction holds over the corrected fact's valid time unless it names its own validFrom "
    "('it was never X' vs 'since May it is Y'). Only a current (active) fact can be corrected (409 otherwise).",
    cli=Cli(("facts", "correct"), local_scope=True, embeds_locally=True, **FACT_IDS),
    mcp=Mcp(
        tool="correct_fact",
        destructive=True,
        idempotent=True,
        fixed=proposed,
        args=(
            ("fact_id", MCP_FACT_ID),
            ("text", McpArg("text", "the corrected fact, one self-contained sentence")),
            ("reason", MCP_REASON),
        ),
        description="Propose a new value for a current fact (its id from list_facts or recall). The correction "
        "is model-derived, so the trust policy applies: by default it waits for a reviewer and the old fact "
        "stays current until then. Once it is current, it replaces the old fact, whose value is then refused if "
        "asserted again. The reason is kept with the correction.",
    ),
)

RETRACT_FACT = Operation(
    name="retract_fact",
    method="POST",
    path="/v1/facts/{fact_id}/retract",
    tag="lifecycle",
    output=MemoryView,
    permission="memory.write",
    body=RetractRequest,
    path_params=FACT_ID,
    errors=(404, 409),
    example={"reason": "no longer true"},
    summary="Retract a current fact that has no replacement; its value is tombstoned.",
    cli=Cli(("facts", "retract"), local_scope=True, done="retracted {fact_id}; its value is tombstoned", **FACT_IDS),
    mcp=Mcp(
        tool="retract_fact",
        destructive=True,
        args=(("fact_id", MCP_FACT_ID), ("reason", MCP_REASON)),
        description="Retract a current fact that is no longer true and has no replacement (use correct_fact "
        "when there is a new value). It stops being current at once, recall no longer returns it, and its value "
        "is refused if asserted again; its history is kept (fact_history) and a reviewer can restore the value.",
    ),
)

FACT_HISTORY = Operation(
    name="fact_history",
    method="GET",
    path="/v1/facts/{fact_id}/history",
    tag="lifecycle",
    output=FactHistory,
    permission="memory.read",
    query=FactHistoryQuery,
    path_params=FACT_ID,
    errors=(404,),
    summary="A fact's versions, oldest first (or newest first), a page at a time, with their reasons and the "
    "values they retired.",
    cli=Cli(("facts", "history"), local_scope=True, **FACT_IDS),
    mcp=Mcp(
        tool="fact_history",
        read_only=True,
        args=(
            ("fact_id", MCP_FACT_ID),
            ("newest_first", McpArg("newestFirst", "the newest versions first (default true)", default=True)),
            ("limit", McpArg("limit", "at most this many versions (1-100)", default=20, bounds={"le": 100})),
            ("cursor", McpArg("cursor", "the cursor the previous answer gave, for the next versions", default=None)),
        ),
        description="Show the versions of a fact, newest first (or oldest first): what replaced what, when and "
        "why, and the retired values of its subject and kind that are refused if asserted again.",
    ),
)

LIST_TOMBSTONES = Operation(
    name="list_tombstones",
    method="GET",
    path="/v1/tombstones",
    tag="lifecycle",
    output=TombstoneList,
    permission="memory.read",
    query=TombstoneQuery,
    summary="Values refused in the caller's scope.",
    cli=Cli(("tombstones", "list"), local_scope=True),
)

LIFT_TOMBSTONE = Operation(
    name="lift_tombstone",
    method="POST",
    path="/v1/tombstones/{tombstone_id}/lift",
    tag="lifecycle",
    output=TombstoneView,
    permission="tombstone.lift",
    body=LiftRequest,
    path_params={"tombstone_id": "the tombstone's id"},
    errors=(404, 409),
    example={"reason": "it is true again"},
    summary="Let a tombstoned value become current again (reviewer or admin keys).",
    cli=Cli(("tombstones", "lift"), id_prefix_of="list_tombstones", id_key="tombstoneId"),
)
