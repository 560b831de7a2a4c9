"""The SDK imports no operation's models up front (its methods name them by module, and an area's
first call imports its operations), yet every method's type hints resolve as if it had: tools that
read them (``typing.get_type_hints``, pydantic's ``validate_call``) see the real models."""

from __future__ import annotations

import subprocess
import sys

from engramdb.models.operations import OPERATIONS

# Run in a fresh interpreter: this test process has imported every model already.
PROBE = """
import inspect, sys, typing
import pydantic
from engramdb.sdk import AsyncClient, Client
loaded = [m for m in ("engramdb.models.operations.registry", "engramdb.models.knowledge") if m in sys.modules]
print("loaded", loaded)
resolved = 0
for cls in (Client, AsyncClient):
    for name, method in inspect.getmembers(cls, inspect.isfunction):
        if not name.startswith("_"):
            hints = typing.get_type_hints(method)
            resolved += 1
models = {h.__name__ for h in typing.get_type_hints(Client.recall).values() if isinstance(h, type)}
print("resolved", resolved, "recall", sorted(models))
checked = pydantic.validate_call(Client.correct_fact)
print("validate_call", checked.__name__)
print("loaded", [m for m in ("engramdb.models.operations.registry", "engramdb.models.knowledge") if m in sys.modules])
"""


def test_every_method_s_hints_resolve_though_no_model_was_imported_up_front() -> None:
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    first, second, third, fourth = done.stdout.splitlines()
    assert first == "loaded []"  # nothing imported up front ...
    count = int(second.split()[1])
    assert count >= 2 * len(OPERATIONS), second  # ... and every method of both clients resolved
    assert second.endswith("recall ['RecallResponse']"), second  # to the real classes (the body is a union)
    assert third == "validate_call correct_fact"
    assert fourth == "loaded ['engramdb.models.knowledge']"  # positive control: resolving imported the models


def test_a_package_names_its_submodules_and_nothing_else() -> None:
    import engramdb.models

    assert hasattr(engramdb.models, "recall") and engramdb.models.recall.__name__ == "engramdb.models.recall"
    assert not hasattr(engramdb.models, "no_such_module")  # an AttributeError, as for any missing name
    assert not hasattr(engramdb.models, "__wrapped__")  # dunder look-ups never import anything
