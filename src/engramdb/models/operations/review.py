"""The review queue: facts awaiting a person, approved, rejected or edited and approved."""

from __future__ import annotations

from engramdb.models.lifecycle import (
    EditAndApprove,
    RejectDecision,
    ReviewDecision,
    ReviewQuery,
    ReviewQueue,
)
from engramdb.models.memories import (
    MemoryView,
    WriteResponse,
)
from engramdb.models.operation import Cli, Operation
from engramdb.models.operations.common import (
    FACT_ID,
)

REVIEW_QUEUE = Operation(
    name="review_queue",
    method="GET",
    path="/v1/review",
    tag="review",
    output=ReviewQueue,
    permission="review.read",
    query=ReviewQuery,
    summary="Facts awaiting review in the tenant, oldest first (reviewer or admin keys).",
    cli=Cli(("review", "list")),
)

APPROVE = Operation(
    name="approve",
    method="POST",
    path="/v1/review/{fact_id}/approve",
    tag="review",
    output=WriteResponse,
    permission="review.decide",
    body=ReviewDecision,
    path_params=FACT_ID,
    errors=(404, 409),
    example={"reason": "confirmed with the user"},
    body_optional=True,
    summary="Make a pending fact current (tombstones and the age guard apply).",
    cli=Cli(
        ("review", "approve"),
        id_prefix_of="review_queue",
        id_prefix_query={"limit": 1000},
        done="approved {fact_id}: {answer.outcome}, now {answer.memory.status}",
    ),
)

REJECT = Operation(
    name="reject",
    method="POST",
    path="/v1/review/{fact_id}/reject",
    tag="review",
    output=MemoryView,
    permission="review.decide",
    body=RejectDecision,
    path_params=FACT_ID,
    errors=(404, 409),
    example={"reason": "the user never said so"},
    summary="Reject a pending fact, saying why; its value is tombstoned with the reason.",
    cli=Cli(
        ("review", "reject"),
        id_prefix_of="review_queue",
        id_prefix_query={"limit": 1000},
        done="rejected {fact_id}; its value is tombstoned",
    ),
)

EDIT_AND_APPROVE = Operation(
    name="edit_and_approve",
    method="POST",
    path="/v1/review/{fact_id}/edit-and-approve",
    tag="review",
    output=WriteResponse,
    permission="review.decide",
    body=EditAndApprove,
    path_params=FACT_ID,
    errors=(404, 409),
    example={"text": "The user lives in Lisbon.", "reason": "typo"},
    summary="Replace a pending fact's text with the reviewer's, and approve it.",
    cli=Cli(("review", "edit"), id_prefix_of="review_queue", id_prefix_query={"limit": 1000}),
)
