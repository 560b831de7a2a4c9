"""Laws of the fusion functions (hypothesis) and the lexical query terms."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from engramdb.core import fusion
from engramdb.core.recall import lexical_terms


@st.composite
def ranked_lists(draw: st.DrawFn) -> dict[str, list[tuple[int, float]]]:
    arms: dict[str, list[tuple[int, float]]] = {}
    for name in ("dense", "lexical"):
        ids = draw(st.lists(st.integers(1, 40), unique=True, max_size=15))
        scores = sorted(draw(st.lists(st.floats(-5, 5), min_size=len(ids), max_size=len(ids))), reverse=True)
        arms[name] = list(zip(ids, scores, strict=True))
    return arms


METHODS = {
    "rrf": lambda arms, w: fusion.rrf(arms, w, k=60),
    "weighted": fusion.weighted,
}
WEIGHTS = {"dense": 0.5, "lexical": 0.5}


@settings(max_examples=200, derandomize=True)
@given(ranked_lists())
def test_result_ignores_the_order_of_the_arms(arms: dict[str, list[tuple[int, float]]]) -> None:
    for method in METHODS.values():
        forward = [(f.rowid, round(f.score, 12)) for f in method(arms, WEIGHTS)]
        backward = [(f.rowid, round(f.score, 12)) for f in method(dict(reversed(arms.items())), WEIGHTS)]
        assert forward == backward


@settings(max_examples=200, derandomize=True)
@given(ranked_lists(), st.integers(100, 200))
def test_a_row_first_in_every_arm_comes_first(arms: dict[str, list[tuple[int, float]]], winner: int) -> None:
    arms = {name: [(winner, 10.0), *ranked] for name, ranked in arms.items()}
    for method in METHODS.values():
        fused = method(arms, WEIGHTS)
        assert fused[0].rowid == winner
        assert abs(fused[0].score - 1.0) < 1e-9  # normalised: first everywhere scores 1
        assert all(0.0 <= f.score <= 1.0 + 1e-9 for f in fused)


def test_each_arm_contribution_adds_up_and_absent_arms_give_nothing() -> None:
    arms = {"dense": [(1, 0.9), (2, 0.8), (4, 0.1)], "lexical": [(2, 7.0), (3, 1.0)]}
    for method in METHODS.values():
        fused = {f.rowid: f for f in method(arms, WEIGHTS)}
        assert set(fused[1].ranks) == {"dense"} and set(fused[3].ranks) == {"lexical"}
        for row in fused.values():
            assert abs(sum(row.parts.values()) - row.score) < 1e-12
    weighted = {f.rowid: f for f in fusion.weighted(arms, WEIGHTS)}
    assert weighted[2].score > weighted[1].score  # in both arms beats top of one
    assert weighted[3].score == 0.0  # last of its only arm: min-max gives 0


def test_lexical_terms() -> None:
    assert lexical_terms("What is the user's favourite TEA?") == ["user", "favourite", "tea"]
    assert lexical_terms("room 5 in block B") == ["room", "5", "block"]
    assert lexical_terms("the the of") == ["the", "of"]  # only stopwords: keep them
    assert lexical_terms("") == []
    assert len(lexical_terms(" ".join(f"w{i}" for i in range(200)))) == 64
