"""Hypothesis strategies for record searches: every operator of the where-language, random nesting,
and sizes around every limit of the budget (storage/knowledge/port.py), valid and not."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from engramdb.storage.knowledge.port import BUDGET

PROPERTIES = ("status", "priority", "title", "due", "tags", "done", "score", "p0", "p1", "p2")
BAD_NAMES = ("Bad Name", "9lives", "a-b", "", "x" * 70, "$nope")
LABELS = ("TASK", "PROJECT", "ENTITY", "OWNER")
COMPARISONS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte")
TEXT_MATCH = ("$contains", "$startsWith", "$endsWith")
PARTS = ("$year", "$month", "$day", "$hour", "$minute", "$second")
FUNCTIONS = ("count", "sum", "avg", "min", "max")

texts = st.one_of(
    st.sampled_from(["open", "done", "Alice", "billing", "Write the invoice migration", "", "%", "_", "\\"]),
    st.text(max_size=12),
    st.text(min_size=199, max_size=260),  # around the 200 characters the value index holds
)
moments = st.sampled_from(["2026-03-10T12:00:00Z", "2025-11-02T00:00:00+09:00", "2026-02-30T00:00:00Z", "yesterday"])
numbers = st.one_of(
    st.integers(-10, 10),
    st.integers(-(2**53), 2**53),
    st.sampled_from([2**60, -(2**63), 10**23]),  # past what a stored number keeps
    st.floats(allow_nan=False, allow_infinity=False),
)
scalars = st.one_of(texts, moments, numbers, st.booleans())
# Mostly a value the operator takes; now and then one it refuses.
operands: st.SearchStrategy[Any] = st.one_of(*[scalars] * 6, st.none(), st.lists(scalars, max_size=2), st.just({}))


def limit_sizes(limit: int) -> st.SearchStrategy[int]:
    """Small sizes mostly, and the sizes just below, at and just past ``limit``."""
    return st.one_of(st.integers(0, 3), st.sampled_from([limit - 1, limit, limit + 1]))


names = st.one_of(*[st.sampled_from(PROPERTIES)] * 8, st.sampled_from(BAD_NAMES))
pseudo = st.sampled_from(["$id", "$createdAt", "$updatedAt"])


@st.composite
def conditions(draw: st.DrawFn) -> Any:
    """The value of a property key: a scalar (equality) or an object of operators."""
    kind = draw(st.integers(0, 6))
    if kind == 0:
        return draw(operands)
    if kind == 1:
        return {draw(st.sampled_from(COMPARISONS)): draw(operands)}
    if kind == 2:
        return {draw(st.sampled_from(TEXT_MATCH)): draw(st.one_of(texts, operands))}
    if kind == 3:
        count = draw(
            st.one_of(st.integers(0, 4), st.sampled_from([BUDGET.values - 1, BUDGET.values, BUDGET.values + 1]))
        )
        return {
            draw(st.sampled_from(["$in", "$nin"])): [draw(scalars) for _ in range(min(count, 3))]
            + [f"v{i}" for i in range(count - 3)]
        }
    if kind == 4:
        return {"$exists": draw(st.one_of(st.booleans(), operands))}
    if kind == 5:
        part = draw(st.sampled_from(PARTS))
        number = st.one_of(st.integers(-1, 10_000), st.sampled_from([2**64, "March", 3.5, None]))
        return {
            part: draw(st.one_of(number, st.dictionaries(st.sampled_from([*COMPARISONS, "$in"]), number, max_size=2)))
        }
    return draw(
        st.dictionaries(st.sampled_from([*COMPARISONS, *TEXT_MATCH, "$exists", "$between"]), operands, max_size=3)
    )


@st.composite
def relations(draw: st.DrawFn) -> Any:
    relation = st.one_of(
        st.sampled_from(["HAS_TASK", "MENTIONS", "has_task", None]),
        st.fixed_dictionaries(
            {},
            optional={
                "type": st.sampled_from(["HAS_TASK", "HAS_OWNER", "bad type", 7]),
                "direction": st.sampled_from(["out", "in", "any", "up"]),
            },
        ),
    )
    return draw(relation)


def wheres(depth: int = 0) -> st.SearchStrategy[dict[str, Any]]:
    """A where object; nesting deeper than the budget now and then, keys past it now and then."""
    leaf = st.dictionaries(st.one_of(names, pseudo), conditions(), max_size=3)
    if depth >= BUDGET.nesting + 1:
        return leaf
    inner = st.deferred(lambda: wheres(depth + 1))
    entry = st.one_of(
        st.tuples(names, conditions()),
        st.tuples(pseudo, st.one_of(texts, moments, st.fixed_dictionaries({"$gte": moments}))),
        st.tuples(st.sampled_from(["$and", "$or"]), st.lists(inner, min_size=0, max_size=3)),
        st.tuples(st.just("$not"), inner),
        st.tuples(st.sampled_from(LABELS), _related(inner)),
        st.tuples(st.sampled_from(["$nor", "task", "$and"]), operands),
    )
    return st.one_of(leaf, st.lists(entry, max_size=4).map(dict), wide(), deep())


def _related(inner: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[Any]:
    with_relation = st.tuples(relations(), inner).map(lambda pair: {"$relation": pair[0], **pair[1]})
    return st.one_of(inner, with_relation, operands)


@st.composite
def wide(draw: st.DrawFn) -> dict[str, Any]:
    """Keys around the budget: flat equalities, or each under an operator (two keys each)."""
    count = draw(limit_sizes(BUDGET.keys))
    if draw(st.booleans()):
        return {f"k{i}": "x" for i in range(count)}
    return {f"k{i}": {"$ne": "x"} for i in range(count // 2)}


@st.composite
def deep(draw: st.DrawFn) -> dict[str, Any]:
    """Objects nested around the budget's depth, through a random mix of $and, $or, $not and labels."""
    where: dict[str, Any] = {"status": draw(scalars)}
    for _ in range(draw(limit_sizes(BUDGET.nesting)) - 1):
        way = draw(st.sampled_from(["$and", "$or", "$not", "TASK", "PROJECT"]))
        where = {way: [where]} if way in ("$and", "$or") else {way: where}
    return where


@st.composite
def searches(draw: st.DrawFn) -> dict[str, Any]:
    """A body for POST /v1/records/search."""
    body: dict[str, Any] = {"where": draw(wheres())}
    if draw(st.booleans()):
        body["labels"] = draw(st.lists(st.sampled_from([*LABELS, *LABELS, "task"]), max_size=3))
    if draw(st.integers(0, 3)) == 0:
        count = draw(limit_sizes(BUDGET.order))
        keys = [draw(st.one_of(names, pseudo)) for _ in range(min(count, 2))] + [f"o{i}" for i in range(count - 2)]
        body["orderBy"] = {key: draw(st.sampled_from(["asc", "desc", "asc", "desc", "up"])) for key in keys}
    if draw(st.integers(0, 3)) == 0:
        count = draw(limit_sizes(BUDGET.aggregates))
        body["aggregate"] = {
            f"a{i}": {"fn": draw(st.sampled_from(FUNCTIONS)), "field": draw(st.one_of(st.just("priority"), names))}
            for i in range(count)
        }
        body["groupBy"] = draw(st.lists(names, max_size=4))
    body["count"] = draw(st.booleans())
    body["limit"] = draw(st.sampled_from([1, 10, 1000]))
    body["skip"] = draw(st.sampled_from([0, 1, 5]))
    if draw(st.integers(0, 5)) == 0:
        body["query"] = draw(st.sampled_from(["invoice migration", "tea"]))
    return body
