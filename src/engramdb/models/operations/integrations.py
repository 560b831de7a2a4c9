"""Operations the integrations need (Hermes, LangGraph, Claude Code hooks, ``engramdb.Memory``): resolving a
scope, and the structured fact search the LangGraph store stands on.

Appended to ``engramdb.models.operations.OPERATIONS``; declared like every other operation.
"""

from __future__ import annotations

from typing import Any

from engramdb.contract.events import ScopeFields
from engramdb.models.fact_search import FactPage, FactSearch, SubjectList, SubjectQuery
from engramdb.models.operation import Cli, Operation
from engramdb.models.scopes import ScopeResolution

RESOLVE_SCOPE = Operation(
    name="resolve_scope",
    method="POST",
    path="/v1/scope/resolve",
    tag="integrations",
    output=ScopeResolution,
    permission="memory.read",
    body=ScopeFields,
    body_optional=True,
    body_arg="scope",
    example={"privacyScope": "private", "sandboxEligible": False},  # with a host key, add "userId": "user-42"
    summary="Check the key and resolve a scope: a userId becomes its participantScopeHash (the salt stays here).",
    description="Answers the key's tenant, role and grant, and the scope a request naming these fields would "
    "act in (403 naming the field if the key may not name it). A host that knows its users by their own ids "
    "sends userId; the server hashes it with the tenant's secret salt and stores and logs nothing of it. "
    "MemorySession calls it at start, so a wrong key fails there.",
    cli=Cli(("hash-participant",), positional=("userId",), raw={"--hash": "participant_scope_hash"}),
)

SEARCH_FACTS = Operation(
    name="search_facts",
    method="POST",
    path="/v1/facts/search",
    tag="integrations",
    output=FactPage,
    permission="memory.read",
    body=FactSearch,
    errors=(502,),
    example={
        "subjectPrefix": "ns:prefs/",
        "where": [{"path": ["v", "color"], "op": "eq", "value": "red"}],
        "query": "apple pie",
        "limit": 10,
    },
    summary="Current facts under a subject prefix whose JSON text meets conditions, ranked or newest first.",
    description="For facts whose text is a JSON object (structured facts, as the LangGraph store writes them). "
    "The prefix and the conditions choose the facts first; with a query every one of them is then ranked by its "
    "relevance (the larger of its cosine with the query and the share of the query's words it holds), so a fact "
    "is found by its words the moment it is written and any page is exact; without one, newest first. A scope "
    "field left open (and not fixed by the key) searches every value of it.",
    cli=Cli(("facts", "search"), positional=("subjectPrefix",), local_scope=True, needs_model=True),
)

LIST_SUBJECTS = Operation(
    name="list_subjects",
    method="GET",
    path="/v1/subjects",
    tag="integrations",
    output=SubjectList,
    permission="memory.read",
    query=SubjectQuery,
    summary="The distinct subjects of current facts under a prefix, in code point order, a page at a time.",
    description="Pass the answer's nextCursor as after for the next page. A scope field left open (and not fixed "
    "by the key) lists every value of it: a host key sees its agent's subjects across participants.",
    cli=Cli(("facts", "subjects"), positional=("subjectPrefix",), local_scope=True),
)

INTEGRATION_OPERATIONS: tuple[Operation[Any], ...] = (RESOLVE_SCOPE, SEARCH_FACTS, LIST_SUBJECTS)
