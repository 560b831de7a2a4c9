"""Calling the service for a declared operation: the one way every surface reaches it."""

from __future__ import annotations

from typing import Any, cast

from pydantic import BaseModel

from engramdb.contract.bounds import clean_parameter
from engramdb.core.auth import Caller
from engramdb.core.service import MemoryService
from engramdb.models.inputs import Inputs
from engramdb.models.operation import Operation


def run(service: MemoryService, op: Operation[Any], caller: Caller | None, inputs: Inputs) -> BaseModel | None:
    """Call ``op``'s service method with the caller and the validated inputs; return its answer."""
    method = service.operation(op.name)
    if op.public:
        return cast(BaseModel | None, method())
    assert caller is not None, f"{op.name} needs a caller"
    path = tuple(clean_parameter(name, value) for name, value in zip(op.path_params, inputs.path, strict=True))
    return cast(BaseModel | None, method(caller, *Inputs(path, inputs.query, inputs.body).args()))
