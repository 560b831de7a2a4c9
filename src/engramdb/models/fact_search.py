"""Structured fact search: facts whose text is a JSON object, found by subject prefix and fields."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from engramdb.contract.bounds import LONE_SURROGATE, has_lone_surrogate, strip_nul
from engramdb.contract.events import ScopeFields, WireModel
from engramdb.errors import InvalidInputError
from engramdb.models.base import ResponseModel, ScopeQuery
from engramdb.models.memories import MemoryView

MAX_PAGE = 1_000
_TYPES = ("object", "array", "string", "number", "boolean", "null")
PathStep = str | int


class FieldCondition(WireModel):
    """One condition on the JSON object a fact's text holds (a fact whose text is no JSON object
    meets none)."""

    path: list[PathStep] = Field(
        min_length=1,
        max_length=16,
        description='where in the object: keys (strings) and array indexes (numbers from 0), e.g. ["v", "tags", 0]',
    )
    op: Literal["eq", "ne", "gt", "gte", "lt", "lte", "type", "length"] = Field(
        description="eq: the same JSON value (numbers by value; null also matches a missing field); ne: not eq "
        "(a missing field is not equal); gt gte lt lte: a number compared with value; type: of the JSON type "
        "value (object, array, string, number, boolean, null); length: an array of value elements"
    )
    value: Any = Field(
        None, description="the operand: any JSON value for eq and ne (absent: null), a number for the others"
    )

    @model_validator(mode="before")
    @classmethod
    def _no_nulls(cls, data: Any) -> Any:
        # Unlike other bodies, null is a value here (eq null: the field is null or missing).
        return strip_nul(data) if isinstance(data, dict) else data

    @model_validator(mode="after")
    def _operand_fits(self) -> FieldCondition:
        for step in self.path:
            if isinstance(step, str) and ('"' in step or not 0 < len(step) <= 256):
                raise InvalidInputError("a path key is 1 to 256 characters, without a double quote", field="path")
            if isinstance(step, int) and not 0 <= step <= 10_000:
                raise InvalidInputError("a path index is 0 to 10000", field="path")
        number = isinstance(self.value, (int, float)) and not isinstance(self.value, bool)
        if self.op in ("gt", "gte", "lt", "lte") and not number:
            raise InvalidInputError(f"{self.op} compares with a number", field="value")
        if self.op == "type" and self.value not in _TYPES:
            raise InvalidInputError(f"type is one of {', '.join(_TYPES)}", field="value")
        if self.op == "length" and not (type(self.value) is int and 0 <= self.value <= 2**31):
            raise InvalidInputError("length takes a whole number from 0", field="value")
        if has_lone_surrogate(self.value):
            raise InvalidInputError(f"value {LONE_SURROGATE}", field="value")
        return self


class FactSearch(WireModel):
    """Body of ``POST /v1/facts/search``."""

    subject_prefix: str = Field(min_length=1, max_length=256, description="only facts whose subject starts with this")
    query: str | None = Field(
        None,
        min_length=1,
        max_length=4_000,
        description="rank every matching fact by its relevance to this (absent: newest first)",
    )
    where: list[FieldCondition] = Field(
        default_factory=list, max_length=64, description="conditions on the JSON object a fact's text holds, all met"
    )
    unranked_source_event_ids: list[str] = Field(
        default_factory=list,
        max_length=16,
        description="facts from these sourceEventIds a query does not rank: they follow the ranked ones, newest "
        "first, unscored (the LangGraph store's index=False items)",
    )
    limit: int = Field(10, ge=1, le=MAX_PAGE, description="at most this many facts (1-1000)")
    offset: int = Field(0, ge=0, le=1_000_000, description="skip this many first (paging through the order)")
    count: bool = Field(
        False,
        description="also count every match (total) without a query: a pass over all of them, where a page stops early",
    )
    scope: ScopeFields | None = Field(
        None, description="scope fields the key does not fix; a field left out searches every scope's value of it"
    )

    @model_validator(mode="after")
    def _storable(self) -> FactSearch:
        if has_lone_surrogate([self.subject_prefix, self.query or "", *self.unranked_source_event_ids]):
            raise InvalidInputError(f"subjectPrefix, query or unrankedSourceEventIds {LONE_SURROGATE}", field="query")
        return self


class FoundFact(ResponseModel):
    """A fact a search found, with its score when the search was ranked."""

    fact: MemoryView = Field(description="the fact as stored")
    score: float | None = Field(
        None,
        description="with a query: its relevance, 0 to 1 (the larger of its vector's cosine with the query and "
        "the share of the query's word information its words hold)",
    )


class FactPage(ResponseModel):
    """A page of a structured fact search."""

    facts: list[FoundFact] = Field(description="best first with a query, else newest first")
    total: int | None = Field(
        None,
        description="how many facts match in all (offset and limit aside), where known: when count was asked, when "
        "this page holds the last match, or with a query whose conditions were read for every fact",
    )


class SubjectQuery(ScopeQuery):
    """Which subjects to list (scope fields the key does not fix may be left out: every value)."""

    subject_prefix: str = Field(min_length=1, max_length=256, description="only subjects that start with this")
    after: str | None = Field(None, max_length=256, description="only subjects after this one (nextCursor)")
    limit: int = Field(100, ge=1, le=MAX_PAGE, description="at most this many subjects (1-1000)")


class SubjectList(ResponseModel):
    """Subjects of current facts, in code point order."""

    subjects: list[str] = Field(description="the distinct subjects, ascending")
    next_cursor: str | None = Field(None, description="pass as ?after= for the next page; absent on the last")
