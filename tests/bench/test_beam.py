"""BEAM as an evaluation dataset: episodes per user message, evidence from ``source_chat_ids``
(lists, objects of lists, nested), the older and newer statement of a knowledge update, abstention
skipped (issue 33)."""

from __future__ import annotations

from typing import Any

from engramdb_bench.beam import anchor_date, beam_conversation, message_ids


def _chat() -> list[dict[str, Any]]:
    def turn(i: int, text: str) -> list[dict[str, Any]]:
        return [{"id": i, "role": "user", "content": text}, {"id": i + 1, "role": "assistant", "content": "ok"}]

    return [
        {"batch_number": 1, "time_anchor": "March-15-2024", "turns": [turn(0, "I use Flask 2.0"), turn(2, "hi")]},
        {
            "batch_number": 2,
            "turns": [[{**turn(4, "Now Flask 3.1")[0], "time_anchor": "April-02-2024"}, turn(4, "")[1]]],
        },
    ]


def test_messages_become_episodes_and_evidence() -> None:
    probes = {
        "knowledge_update": [{"question": "Which Flask?", "source_chat_ids": {"original": [0], "updated": [5]}}],
        "information_extraction": [{"question": "What did I say?", "source_chat_ids": [[1], 2]}],
        "abstention": [{"question": "My cat's name?", "source_chat_ids": []}],
    }
    conv = beam_conversation("100K-1", _chat(), probes)
    assert [s.session_id for s in conv.sessions] == ["B1", "B2"]
    assert conv.sessions[1].observed_at == anchor_date("April-02-2024") == "2024-04-02T00:00:00Z"  # a message's anchor
    update, extraction, abstention = (
        next(q for q in conv.questions if q.category == c)
        for c in ("knowledge_update", "information_extraction", "abstention")
    )
    # An assistant message's id belongs to the user message before it.
    assert update.evidence_turns == {"0", "4"} and (update.older, update.newer) == (frozenset({"0"}), frozenset({"4"}))
    assert extraction.evidence_turns == {"0", "2"} and extraction.older == frozenset()
    assert abstention.skip_reason == "abstention" and update.skip_reason is None  # the positive control
    assert message_ids({"a": [1, [2, {"b": 3}]], "c": None}) == [1, 2, 3]
