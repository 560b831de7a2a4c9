"""Hypothesis strategies for record searches: every operator of the where-language, random nesting,
and sizes around every limit of the budget (storage/knowledge/port.py).

Half the searches are well formed throughout, so that they reach the database whole (only a size
past a limit refuses them); the other half mix in what the language refuses (a bad name, an
operand of the wrong type, an unknown operator, an empty $or), anywhere in the tree.
"""

from __future__ import annotations

from functools import cache
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
moments = st.sampled_from(["2026-03-10T12:00:00Z", "2025-11-02T00:00:00+09:00", "2026-01-01T00:00:00.123456Z"])
numbers = st.one_of(st.integers(-10, 10), st.integers(-(2**53), 2**53), st.floats(-1e12, 1e12))
ordered = st.one_of(texts, moments, numbers)  # what $gt and friends compare
scalars = st.one_of(ordered, st.booleans())
# What the language refuses as an operand (or a number it cannot store), and names it refuses.
wrong = st.one_of(
    st.none(),
    st.lists(scalars, max_size=2),
    st.just({}),
    st.sampled_from([2**60, -(2**63), 10**23, "2026-02-30T00:00:00Z"]),
)
bad_names = st.sampled_from(BAD_NAMES)


def either(valid: bool, good: st.SearchStrategy[Any], bad: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """``good``; when not ``valid``, now and then ``bad``."""
    return good if valid else st.one_of(*[good] * 6, bad)


def limit_sizes(limit: int) -> st.SearchStrategy[int]:
    """Small sizes mostly, and the sizes just below, at and just past ``limit``."""
    return st.one_of(st.integers(1, 3), st.sampled_from([limit - 1, limit, limit + 1]))


@cache
def names(valid: bool) -> st.SearchStrategy[str]:
    return either(valid, st.sampled_from(PROPERTIES), bad_names)


@st.composite
def conditions(draw: st.DrawFn, valid: bool) -> Any:
    """The value of a property key: a scalar (equality) or an object of operators."""
    kind = draw(st.integers(0, 6 if valid else 7))
    if kind == 0:
        return draw(either(valid, scalars, wrong))
    if kind == 1:
        op = draw(st.sampled_from(COMPARISONS))
        return {op: draw(either(valid, scalars if op in ("$eq", "$ne") else ordered, wrong))}
    if kind == 2:
        return {draw(st.sampled_from(TEXT_MATCH)): draw(either(valid, texts, st.one_of(numbers, wrong)))}
    if kind == 3:
        count = draw(limit_sizes(BUDGET.values))
        values = [draw(either(valid, scalars, wrong)) for _ in range(min(count, 3))] + [
            f"v{i}" for i in range(count - 3)
        ]
        return {draw(st.sampled_from(["$in", "$nin"])): values}
    if kind == 4:
        return {"$exists": draw(either(valid, st.booleans(), wrong))}
    if kind == 5:
        part, number = (
            draw(st.sampled_from(PARTS)),
            either(valid, st.integers(0, 9999), st.sampled_from([-1, 2**64, "March", 3.5])),
        )
        return {
            part: draw(st.one_of(number, st.dictionaries(st.sampled_from(COMPARISONS), number, min_size=1, max_size=2)))
        }
    if kind == 6:
        return {"$gte": draw(ordered), "$lt": draw(ordered), "$ne": draw(scalars)}
    return draw(st.dictionaries(st.sampled_from([*COMPARISONS, "$between", "$regex"]), scalars, max_size=2))


@cache
def relations(valid: bool) -> st.SearchStrategy[Any]:
    good = st.one_of(
        st.sampled_from(["HAS_TASK", "MENTIONS", "HAS_OWNER"]),
        st.fixed_dictionaries(
            {},
            optional={
                "type": st.sampled_from(["HAS_TASK", "HAS_OWNER"]),
                "direction": st.sampled_from(["out", "in", "any"]),
            },
        ),
    )
    bad = st.one_of(st.sampled_from(["has_task", 7]), st.fixed_dictionaries({"direction": st.just("up")}))
    return either(valid, good, bad)


@cache
def pseudo_conditions(valid: bool) -> st.SearchStrategy[tuple[str, Any]]:
    good = st.one_of(
        st.tuples(
            st.just("$id"), st.one_of(texts, st.fixed_dictionaries({"$in": st.lists(texts, min_size=1, max_size=3)}))
        ),
        st.tuples(
            st.sampled_from(["$createdAt", "$updatedAt"]), st.one_of(moments, st.fixed_dictionaries({"$gte": moments}))
        ),
        st.tuples(
            st.sampled_from(["$createdAt", "$updatedAt"]), st.fixed_dictionaries({"$year": st.integers(0, 9999)})
        ),
        st.tuples(st.sampled_from(["$id", "$createdAt"]), st.fixed_dictionaries({"$exists": st.booleans()})),
    )
    bad = st.tuples(st.sampled_from(["$createdAt", "$id"]), st.one_of(numbers, st.just("yesterday")))
    return either(valid, good, bad)


@cache
def wheres(valid: bool, depth: int = 0) -> st.SearchStrategy[dict[str, Any]]:
    """A where object; nesting past the budget's depth, and keys past its count, now and then."""
    leaf = st.dictionaries(names(valid), conditions(valid), min_size=1, max_size=3)
    if depth >= BUDGET.nesting + 1:
        return leaf
    inner = st.deferred(lambda: wheres(valid, depth + 1))
    listed = st.lists(inner.filter(bool), min_size=1, max_size=3)
    entry = st.one_of(
        st.tuples(names(valid), conditions(valid)),
        pseudo_conditions(valid),
        st.tuples(st.sampled_from(["$and", "$or"]), either(valid, listed, st.just([]))),
        st.tuples(st.just("$not"), either(valid, inner.filter(bool), st.just({}))),
        st.tuples(st.sampled_from(LABELS), related(valid, inner)),
        *([] if valid else [st.tuples(st.sampled_from(["$nor", "task", "$and"]), scalars)]),
    )
    return st.one_of(leaf, st.lists(entry, min_size=1, max_size=4).map(dict), wide(), deep(valid), many_values())


def related(valid: bool, inner: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[Any]:
    with_relation = st.tuples(relations(valid), inner).map(lambda pair: {"$relation": pair[0], **pair[1]})
    return either(valid, st.one_of(inner, with_relation, st.just({})), scalars)


@st.composite
def wide(draw: st.DrawFn) -> dict[str, Any]:
    """Keys around the budget: flat equalities, or each under an operator (two keys each)."""
    count = draw(limit_sizes(BUDGET.keys))
    if draw(st.booleans()):
        return {f"k{i}": "x" for i in range(count)}
    return {f"k{i}": {"$ne": "x"} for i in range((count + 1) // 2)}


@st.composite
def many_values(draw: st.DrawFn) -> dict[str, Any]:
    """$in/$nin values around the budget, over one to three lists of texts, numbers or both."""
    total = draw(limit_sizes(BUDGET.values))
    lists = draw(st.integers(1, 3))
    where: dict[str, Any] = {}
    for i in range(lists):
        size = total // lists + (total % lists if i == lists - 1 else 0)
        kind = draw(st.sampled_from(["text", "number", "long", "mixed"]))
        values: list[Any] = [f"v{j}" for j in range(size)]
        if kind == "number":
            values = list(range(size))
        elif kind == "long":
            values = [f"{j:0>250}" for j in range(size)]  # past the value index's 200 characters
        elif kind == "mixed":
            values = [j if j % 2 else f"v{j}" for j in range(size)]
        where[PROPERTIES[i]] = {draw(st.sampled_from(["$in", "$nin"])): values} if size else "x"
    return where


@st.composite
def deep(draw: st.DrawFn, valid: bool) -> dict[str, Any]:
    """Objects nested around the budget's depth, through a random mix of $and, $or, $not and labels
    (a fifth label below the root is refused on its own limit)."""
    where: dict[str, Any] = {draw(st.sampled_from(PROPERTIES)): draw(scalars)}
    for _ in range(draw(limit_sizes(BUDGET.nesting)) - 1):
        way = draw(st.sampled_from(["$and", "$or", "$not", "$not", "TASK", "PROJECT"]))
        where = {way: [where]} if way in ("$and", "$or") else {way: where}
    return where


@st.composite
def searches(draw: st.DrawFn) -> dict[str, Any]:
    """A body for POST /v1/records/search."""
    valid = draw(st.booleans())
    body: dict[str, Any] = {"where": draw(st.one_of(wheres(valid), wheres(valid), st.just({})))}
    if draw(st.booleans()):
        body["labels"] = draw(st.lists(either(valid, st.sampled_from(LABELS), st.just("task")), max_size=3))
    if draw(st.integers(0, 3)) == 0:
        count = draw(limit_sizes(BUDGET.order))
        keys = [draw(st.one_of(names(valid), st.sampled_from(["$createdAt", "$id"]))) for _ in range(min(count, 2))]
        ways = either(valid, st.sampled_from(["asc", "desc"]), st.just("up"))
        body["orderBy"] = {key: draw(ways) for key in [*keys, *(f"o{i}" for i in range(count - 2))]}
    if draw(st.integers(0, 3)) == 0:
        count = draw(limit_sizes(BUDGET.aggregates))
        field = either(
            valid, st.sampled_from(["priority", "score", "status", "absent"]), st.one_of(st.none(), bad_names)
        )
        body["aggregate"] = {
            f"a{i}": {"fn": draw(st.sampled_from(FUNCTIONS)), "field": draw(field)} for i in range(count)
        }
        body["groupBy"] = draw(st.lists(names(valid), max_size=3 if valid else 4))
    body["count"] = draw(st.booleans())
    body["limit"] = draw(st.sampled_from([1, 10, 1000]))
    body["skip"] = draw(st.sampled_from([0, 1, 5]))
    if draw(st.integers(0, 5)) == 0:
        body["query"] = draw(st.sampled_from(["invoice migration", "tea"]))
    return body
