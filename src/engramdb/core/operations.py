"""Calling the service for a declared operation: the one way every surface reaches it."""

from __future__ import annotations

from typing import Any, cast

from pydantic import BaseModel

from engramdb import traces
from engramdb.contract.bounds import clean_parameter
from engramdb.core.auth import Caller
from engramdb.core.service import MemoryService
from engramdb.models.inputs import Inputs
from engramdb.models.operation import Operation


def run(service: MemoryService, op: Operation[Any], caller: Caller | None, inputs: Inputs) -> BaseModel | None:
    """Call ``op``'s service method with the caller and the validated inputs; return its answer.

    Traced as ``engramdb.<operation>``: the operation, and who asked (tenant, key id, role).
    """
    method = service.operation(op.name)
    if op.public:
        return cast(BaseModel | None, method())
    assert caller is not None, f"{op.name} needs a caller"
    path = tuple(clean_parameter(name, value) for name, value in zip(op.path_params, inputs.path, strict=True))
    with traces.span(f"engramdb.{op.name}", _attributes(op, caller)):
        return cast(BaseModel | None, method(caller, *Inputs(path, inputs.query, inputs.body).args()))


def _attributes(op: Operation[Any], caller: Caller) -> dict[str, traces.Value] | None:
    if not traces.on():
        return None
    return {
        "engramdb.operation": op.name,
        "engramdb.tenant": caller.tenant,
        "engramdb.key.id": caller.key_id,
        "engramdb.key.role": caller.role,
    }
