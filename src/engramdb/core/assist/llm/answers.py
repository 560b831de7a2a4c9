"""The shapes the model's answers must have, and how an answer is checked.

An answer must be a JSON object holding a list under one key (``facts``, ``verdicts``, ...),
or it gets a repair turn. Items are then read one by one: an item that breaks its shape is
dropped and reported, the rest are used. Fields the model adds beyond the shape (a trust class,
a status, a scope) are ignored: they are not the model's to choose.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic.alias_generators import to_camel

from engramdb.contract.bounds import LONE_SURROGATE, has_lone_surrogate, strip_nul

M = TypeVar("M", bound=BaseModel)


class _Item(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")

    @model_validator(mode="before")
    @classmethod
    def _storable(cls, data: Any) -> Any:
        """As for any write: NULs taken out (PostgreSQL's text cannot hold one), and an item holding a
        lone surrogate (no text UTF-8 can carry) dropped."""
        data = strip_nul(data)
        if has_lone_surrogate(data):
            raise ValueError(f"a field {LONE_SURROGATE}")
        return data


class ExtractedFact(_Item):
    """A candidate fact as the model proposes it."""

    turn: int = Field(0, ge=0, description="the turn it comes from, as numbered in the data")
    subject_key: str = Field(min_length=1, max_length=256)
    kind: str = Field(min_length=1, max_length=64)
    text: str = Field(min_length=1, max_length=4_000)
    confidence: float = Field(0.7, ge=0, le=1)


class Verdict(_Item):
    """How a candidate stands to one of its neighbours."""

    candidate: int = Field(ge=0)
    ref: str = Field(min_length=1, max_length=100)
    verdict: Literal["supersedes", "refines", "coexists", "duplicate"]
    confidence: float = Field(ge=0, le=1)
    reason: str = Field("", max_length=1_000)


class ReflectionItem(_Item):
    """A higher-level statement and the facts it rests on."""

    text: str = Field(min_length=1, max_length=4_000)
    subject_key: str | None = Field(None, min_length=1, max_length=256)
    evidence: list[str] = Field(min_length=1, max_length=100)
    confidence: float = Field(0.6, ge=0, le=1)


class MergeItem(_Item):
    """Whether one group of near-duplicates says one thing, and the merged sentence."""

    group: int = Field(ge=0)
    merge: bool
    text: str = Field("", max_length=4_000)
    confidence: float = Field(0.8, ge=0, le=1)
    reason: str = Field("", max_length=1_000)


def envelope(key: str, item: type[BaseModel]) -> dict[str, Any]:
    """The JSON Schema of ``{key: [item, ...]}``."""
    return {
        "type": "object",
        "properties": {key: {"type": "array", "items": item.model_json_schema(by_alias=True)}},
        "required": [key],
    }


def items_under(key: str) -> Callable[[Any], list[Any]]:
    """A check: the answer is an object holding a list under ``key``; returns that list."""

    def check(answer: Any) -> list[Any]:
        if not isinstance(answer, dict):
            raise ValueError(f"the answer must be a JSON object with a {key!r} list, not {type(answer).__name__}")
        items = answer.get(key)
        if not isinstance(items, list):
            raise ValueError(f"the answer has no {key!r} list")
        return items

    return check


def read_items(model: type[M], items: list[Any]) -> tuple[list[tuple[int, M]], list[tuple[int, str]]]:
    """The items that fit ``model`` (with their positions), and why each other one does not."""
    good: list[tuple[int, M]] = []
    bad: list[tuple[int, str]] = []
    for index, raw in enumerate(items):
        try:
            good.append((index, model.model_validate(raw)))
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "item"
            bad.append((index, f"{where}: {first['msg']}"))
    return good, bad
