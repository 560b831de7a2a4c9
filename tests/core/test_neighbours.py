"""Neighbouring turns: the store knows each episode's neighbours in its session, and recall
lends a turn part of its neighbours' scores when ``neighbour_weight`` is on. Both backends."""

from __future__ import annotations

import pytest

from engramdb.config import RetrievalSettings, Settings
from engramdb.contract.events import Scope
from engramdb.contract.writes import EpisodeWrite, FactWrite
from engramdb.core import auth
from engramdb.core.auth import Caller
from engramdb.core.embedding import HashingEmbedder
from engramdb.core.service import MemoryService
from engramdb.jobs.embedding import drain
from engramdb.models.recall import RecallRequest
from engramdb.storage.port import Store
from tests.factories import episode_body, fact_body, participant, scope_fields

SCOPE = scope_fields()
SCOPE_KEY = auth.scope_key(Scope.model_validate(SCOPE))


def _write(service: MemoryService, caller: Caller, text: str, session: str, turn: int, answer: str = "") -> str:
    body = episode_body(text, answer, session=session, turn=turn, scope=SCOPE)
    return service.writes.write_episode(caller, EpisodeWrite.model_validate(body)).id


def _rowids(store: Store, ids: list[str]) -> list[int]:
    tenant = store.tenant("t1")
    return [tenant.get_memory(SCOPE_KEY, "EPISODE", i).rowid for i in ids]  # type: ignore[union-attr]


def test_adjacent_follows_write_order_within_each_session(
    store: Store, service: MemoryService, operator: Caller
) -> None:
    a = [_write(service, operator, f"session a turn {i}", "a", i) for i in range(2)]
    b0 = _write(service, operator, "session b turn 0", "b", 0)  # interleaved: not a's neighbour
    a.append(_write(service, operator, "session a turn 2", "a", 2))
    fact = service.writes.write_fact(operator, FactWrite.model_validate(fact_body("A fact", scope=SCOPE))).id
    a0, a1, a2 = _rowids(store, a)
    (b,) = _rowids(store, [b0])
    fact_row = store.tenant("t1").get_memory(SCOPE_KEY, "MEMORY_FACT", fact).rowid  # type: ignore[union-attr]
    before, after = store.tenant("t1").adjacent(SCOPE_KEY, [a0, a1, a2, b, fact_row, -1])
    assert before.tolist() == [-1, a0, a1, -1, -1, -1]  # b is alone in its session; facts have none
    assert after.tolist() == [a1, a2, -1, -1, -1, -1]
    other = scope_fields(participantScopeHash=participant("bob"))
    service.writes.write_episode(
        operator, EpisodeWrite.model_validate(episode_body("bob's turn", "", session="a", turn=0, scope=other))
    )
    other_key = auth.scope_key(Scope.model_validate(other))
    seen = store.tenant("t1").adjacent(other_key, [a0, a1])  # another scope's key sees none of them
    assert [x.tolist() for x in seen] == [[-1, -1], [-1, -1]]


def test_a_turn_without_words_keeps_the_chain(store: Store, service: MemoryService, operator: Caller) -> None:
    ids = [_write(service, operator, "hello there", "s", 0)]
    _recall(service, operator, "hello")  # the scope's copy exists before the wordless turn
    ids.append(_write(service, operator, "👍", "s", 1))
    ids.append(_write(service, operator, "see you", "s", 2))
    a, b, c = _rowids(store, ids)
    assert _recall(service, operator, "hello")[0][0] == "hello there"  # recall still answers
    before, after = store.tenant("t1").adjacent(SCOPE_KEY, [a, b, c])
    assert before.tolist() == [-1, a, b] and after.tolist() == [b, c, -1]


def test_lift_reaches_one_and_two_turns_away(store: Store, service: MemoryService, operator: Caller) -> None:
    from engramdb.core.fusion import Fused, FusedRows
    from engramdb.core.ranking import _neighbour_lift

    ids = [_write(service, operator, f"turn {i}", "s", i) for i in range(4)]
    a, b, c, d = _rowids(store, ids)
    # Only candidates (rows the arms found, so eligible ones) are lifted; b and c scored 0.
    rows = [Fused(a, 1.0), Fused(b, 0.0), Fused(c, 0.0), Fused(d, 0.1)]
    fused = FusedRows.of(rows)
    lift = _neighbour_lift(store.tenant("t1"), SCOPE_KEY, fused, 0.4, 0.2)
    assert lift[b] == pytest.approx(0.4 * 1.0 + 0.2 * 0.1)  # a is next to b; d is two away
    assert lift[c] == pytest.approx(0.4 * 0.1 + 0.2 * 1.0)
    assert lift.get(a, 0.0) == 0.0  # b next to it and c two away scored 0: nothing to lend
    alone = FusedRows.of(rows[:1])  # a alone: nobody lends
    assert _neighbour_lift(store.tenant("t1"), SCOPE_KEY, alone, 0.4, 0.2) == {}


def _recall(service: MemoryService, caller: Caller, query: str) -> list[tuple[str, float]]:
    request = RecallRequest.model_validate({"query": query, "scope": SCOPE, "limit": 2, "explain": True})
    memories = service.reads.recall(caller, request).memories
    return [(m.text, m.explain.features.get("neighbours", 0.0) if m.explain else 0.0) for m in memories]


def test_a_turn_next_to_a_strong_match_rises_with_the_neighbour_weight(
    store: Store, settings: Settings, operator: Caller
) -> None:
    plain = MemoryService(
        store, HashingEmbedder(), settings.model_copy(update={"retrieval": RetrievalSettings(neighbour_weight=0.0)})
    )
    lifted = MemoryService(store, HashingEmbedder(), settings)  # the default lends 0.4
    assert settings.retrieval.neighbour_weight > 0
    _write(plain, operator, "Nate said he won the board game night on Friday", "s1", 0)
    _write(plain, operator, "Catan, against four friends", "s1", 1)  # the answer: no query word
    for i in range(12):
        _write(plain, operator, f"Some game on television number {i}", f"other-{i}", 0)
    drain(store.tenant("t1"), plain.shared.embedder)
    query = "Which board game night did Nate win"

    without = _recall(plain, operator, query)
    with_lift = _recall(lifted, operator, query)
    assert without[0][0].startswith("Nate said") and with_lift[0][0].startswith("Nate said")
    assert "Catan, against four friends" not in [text for text, _ in without]
    assert with_lift[1][0] == "Catan, against four friends" and with_lift[1][1] > 0


@pytest.mark.parametrize("exchanges", ["none", "every other turn"])
def test_pruned_lift_gives_what_the_full_lift_gives(
    store: Store, settings: Settings, operator: Caller, exchanges: str
) -> None:
    """Without sessions, only rows that can still reach the top are lifted; the answer is the same,
    also where exchanges (which the lift skips) sit next to strong matches."""
    import random

    service = MemoryService(store, HashingEmbedder(), settings)
    rng = random.Random(5)
    words = "lisbon hotel flight budget ramen tennis garden sister deploy invoice concert visa".split()
    for n in range(240):
        text = " ".join(rng.choices(words, k=rng.randint(2, 7)))
        answer = "noted" if exchanges != "none" and n % 2 else ""
        _write(service, operator, text, f"s{n // 12}", n % 12, answer)
    drain(store.tenant("t1"), service.shared.embedder)
    for _ in range(25):
        query = " ".join(rng.sample(words, 3))
        for limit in (1, 4, 10):
            body = {"query": query, "scope": SCOPE, "limit": limit}
            pruned = service.reads.recall(operator, RecallRequest.model_validate(body)).memories
            full = service.reads.recall(operator, RecallRequest.model_validate({**body, "sessions": 1})).memories
            assert [m.id for m in pruned] == [m.id for m in full]
            assert all(abs(p.score - f.score) < 1e-6 for p, f in zip(pruned, full, strict=True))
            assert pruned  # the comparison is never empty


def test_explain_adds_up_with_only_the_second_ring_on(store: Store, settings: Settings, operator: Caller) -> None:
    service = MemoryService(
        store,
        HashingEmbedder(),
        settings.model_copy(update={"retrieval": RetrievalSettings(neighbour_weight=0.0, second_neighbour_weight=0.5)}),
    )
    for i, text in enumerate(["Nate won the board game night", "small talk", "Catan with four friends"]):
        _write(service, operator, text, "s1", i)
    drain(store.tenant("t1"), service.shared.embedder)  # every row reaches the dense arm, so every row is a candidate
    request = {"query": "Nate board game night", "scope": SCOPE, "limit": 3, "explain": True}
    memories = service.reads.recall(operator, RecallRequest.model_validate(request)).memories
    catan = next(m for m in memories if m.text.startswith("Catan"))
    assert catan.explain is not None and catan.explain.features["neighbours"] > 0  # two away from the match
    for m in memories:
        assert m.explain is not None
        parts = sum(a.contribution for a in m.explain.arms.values()) + sum(m.explain.features.values())
        assert abs(parts - m.score) < 1e-9


def test_an_exchange_next_to_a_strong_match_is_not_lifted_where_an_utterance_is(
    store: Store, settings: Settings, operator: Caller
) -> None:
    """An episode holding the user's words and the answer carries its own meaning: its neighbours
    lend it nothing. The same words written as utterances (no answer) are lifted (the control)."""
    service = MemoryService(store, HashingEmbedder(), settings)
    assert settings.retrieval.neighbour_weight > 0

    def write(text: str, answer: str, session: str, turn: int) -> None:
        body = episode_body(text, answer, session=session, turn=turn, scope=SCOPE)
        service.writes.write_episode(operator, EpisodeWrite.model_validate(body))

    write("Nate said he won the board game night on Friday", "", "utterances", 0)
    write("Catan, against four friends", "", "utterances", 1)
    write("Priya asked which tea she should buy for the board game night", "Try a genmaicha.", "exchanges", 0)
    write("What should I cook tonight", "A risotto would be quick.", "exchanges", 1)
    for i in range(12):
        write(f"Some game on television number {i}", "", f"other-{i}", 0)
    drain(store.tenant("t1"), service.shared.embedder)

    def lifted(query: str) -> dict[str, float]:
        request = RecallRequest.model_validate({"query": query, "scope": SCOPE, "limit": 20, "explain": True})
        return {
            m.text.splitlines()[0]: m.explain.features.get("neighbours", 0.0)
            for m in service.reads.recall(operator, request).memories
            if m.explain is not None
        }

    assert lifted("Which board game night did Nate win")["Catan, against four friends"] > 0  # an utterance: lifted
    exchange = lifted("Which tea for the board game night did Priya ask about")
    assert exchange["What should I cook tonight"] == 0.0  # an exchange next to the match: not lifted
    assert "Priya asked which tea she should buy for the board game night" in exchange  # control: the match is there


def test_an_exchange_is_told_from_an_utterance_by_its_answer_line() -> None:
    from engramdb.contract.writes import default_summary
    from engramdb.core.rows import episode_text, holds_exchange

    assert holds_exchange(episode_text("Which tea?", "Which tea?", "Genmaicha."))
    assert holds_exchange(episode_text("asked about tea", "Which tea should I buy?", "Genmaicha."))
    assert not holds_exchange(episode_text("Which tea?", "Which tea?", ""))  # the user's words alone
    assert not holds_exchange(episode_text("Caroline: Assistant: is my job title", "", ""))  # not on a line of its own
    spoken = "Here is the plan.\nFirst, book the flight."  # the assistant's words alone, with the default summary
    assert not holds_exchange(episode_text(default_summary("", spoken), "", spoken))
    assert not holds_exchange(episode_text(default_summary("", "word " * 200), "", "word " * 200))  # a cut summary
    code = "def f():\n" + " " * 1000 + "return 1"  # the assistant's words alone, mostly blanks
    assert not holds_exchange(episode_text(default_summary("", code), "", code))
    assert not holds_exchange(episode_text(default_summary(" ", "It is."), " ", "It is."))  # a blank user side


def test_the_top_k_is_exact_when_an_exchange_next_to_a_strong_match_loses_its_lift(
    store: Store, service: MemoryService, operator: Caller, settings: Settings
) -> None:
    """N matches strongly and A, an exchange, follows it; B scores between them. Were A's lift kept
    while the rows that can reach the top are chosen, B would be cut from the top two."""
    from engramdb.core import ranking
    from engramdb.core.fusion import Fused, FusedRows
    from engramdb.core.relevance import QueryWords

    written = [("N strong", "s", 0), ("A weak", "s", 1), ("B medium", "t", 0), ("C filler", "u", 0)]
    n, a, b, c = _rowids(store, [_write(service, operator, t, s, i, "an answer") for t, s, i in written])
    fused = FusedRows.of([Fused(n, 1.0), Fused(b, 0.75), Fused(a, 0.5), Fused(c, 0.1)])

    def top(limit: int) -> list[str]:
        hits, _ = ranking.rank(
            store.tenant("t1"),
            SCOPE_KEY,
            "q",
            fused,
            {"dense": 1.0},
            QueryWords({}, 0),
            limit,
            settings.retrieval,
            lambda _: 0.0,
            0,
        )
        return [h.record.text.splitlines()[0] for h in hits]

    assert top(2) == top(4)[:2] == ["N strong", "B medium"]
    assert top(4)[2] == "A weak"  # control: A is found, below B, with no lift of its own
