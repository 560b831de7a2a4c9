"""The registry: every operation of EngramDB, in the order the surfaces list them.

Imported when a surface needs the whole list (the server's routes, the CLI's tree, MCP's tools, the
generator); a client that calls one area imports that area's module alone (``__init__``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engramdb.models.operation import Operation
from engramdb.models.operations.aging import AGING_OPERATIONS
from engramdb.models.operations.assist import ASSIST_OPERATIONS
from engramdb.models.operations.changes import CHANGE_OPERATIONS
from engramdb.models.operations.governance import (
    AUDIT,
    CREATE_KEY,
    GET_POLICY,
    LIST_KEYS,
    LIST_SCOPES,
    PUT_POLICY,
    REVOKE_KEY,
    VERIFY_AUDIT,
)
from engramdb.models.operations.integrations import INTEGRATION_OPERATIONS
from engramdb.models.operations.knowledge import KNOWLEDGE_OPERATIONS
from engramdb.models.operations.lifecycle import (
    CORRECT_FACT,
    FACT_HISTORY,
    LIFT_TOMBSTONE,
    LIST_TOMBSTONES,
    RETRACT_FACT,
)
from engramdb.models.operations.memories import (
    FIND_MEMORY,
    GET_EPISODE,
    GET_FACT,
    HEALTH,
    LIST_EPISODES,
    LIST_FACTS,
    WRITE_EPISODE,
    WRITE_EPISODE_BATCH,
    WRITE_FACT,
)
from engramdb.models.operations.recall import RECALL
from engramdb.models.operations.review import APPROVE, EDIT_AND_APPROVE, REJECT, REVIEW_QUEUE
from engramdb.models.operations.series import USAGE_SERIES

OPERATIONS: tuple[Operation[Any], ...] = (
    HEALTH,
    WRITE_EPISODE,
    WRITE_EPISODE_BATCH,
    WRITE_FACT,
    GET_EPISODE,
    GET_FACT,
    FIND_MEMORY,
    LIST_EPISODES,
    LIST_FACTS,
    LIST_SCOPES,
    CORRECT_FACT,
    RETRACT_FACT,
    FACT_HISTORY,
    LIST_TOMBSTONES,
    LIFT_TOMBSTONE,
    REVIEW_QUEUE,
    APPROVE,
    REJECT,
    EDIT_AND_APPROVE,
    AUDIT,
    VERIFY_AUDIT,
    GET_POLICY,
    PUT_POLICY,
    RECALL,
    CREATE_KEY,
    LIST_KEYS,
    REVOKE_KEY,
    *KNOWLEDGE_OPERATIONS,
    *AGING_OPERATIONS,
    *ASSIST_OPERATIONS,
    *INTEGRATION_OPERATIONS,
    USAGE_SERIES,
    *CHANGE_OPERATIONS,
)
BY_NAME: Mapping[str, Operation[Any]] = {op.name: op for op in OPERATIONS}
