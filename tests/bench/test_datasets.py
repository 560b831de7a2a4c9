"""Loaders and documents on the real benchmark files beside the repository (../shared/bench)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from engramdb_bench.datasets import (
    Conversation,
    load_locomo,
    load_longmemeval,
    locomo_conversation,
    longmemeval_conversation,
    longmemeval_date,
)
from engramdb_bench.documents import DOC_CAP, documents, episodes, split_text

BENCH = Path(__file__).resolve().parents[3] / "shared" / "bench"
LOCOMO = BENCH / "locomo" / "locomo10.json"
LME = BENCH / "longmemeval" / "sample"
LME_MULTI = "47_00ca467f.json"  # multi-session; 3 answer sessions, 2 with a has_answer user turn
LME_ASSISTANT = "46_0e5e2d1a.json"  # single-session-assistant: evidence in no user turn

pytestmark = pytest.mark.skipif(not LOCOMO.exists() or not LME.exists(), reason="../shared/bench not found")


@pytest.fixture(scope="module")
def conv26() -> Conversation:
    return locomo_conversation(json.loads(LOCOMO.read_text())[0])


def test_locomo_conversation(conv26: Conversation) -> None:
    assert conv26.conversation_id == "conv-26"
    assert len(conv26.sessions) == 19
    assert sum(len(s.turns) for s in conv26.sessions) == 419
    first = conv26.sessions[0]
    assert (first.session_id, first.observed_at) == ("D1", "2023-05-08T13:56:00Z")  # 1:56 pm on 8 May, 2023
    assert first.turns[0].turn_id == "D1:1"
    assert first.turns[0].text == "Caroline: Hey Mel! Good to see you! How have you been?"
    q = conv26.questions[0]
    assert q.text == "When did Caroline go to the LGBTQ support group?"
    assert (q.category, q.evidence_turns, q.evidence_sessions, q.skip_reason) == (
        "temporal",
        frozenset({"D1:3"}),
        frozenset({"D1"}),
        None,
    )
    assert len(conv26.questions) == 199
    assert [q.question_id for q in conv26.questions if q.skip_reason] == ["conv-26#30", "conv-26#46"]


def test_locomo_counts_match_the_published_floor_population() -> None:
    data = load_locomo(LOCOMO)
    questions = [q for c in data.conversations for q in c.questions]
    assert len(questions) == 1986
    scored = [q for q in questions if q.category != "adversarial" and q.skip_reason is None]
    assert len(scored) == 1536  # the n of the BM25 floors
    assert sum(q.skip_reason == "no usable evidence" for q in questions) == 4  # the 4 empty lists
    dated = next(q for q in questions if q.question_id == "conv-50#69")  # evidence "D30:05"
    assert dated.evidence_turns == {"D30:5"}
    # "D8:6; D9:17"-style packed evidence is split, ids that name no turn are dropped
    packed = next(q for q in questions if q.question_id == "conv-43#18")  # has "D:11:26"
    assert "D11:26" in packed.evidence_turns and len(packed.evidence_turns) == 7


def test_longmemeval_two_sample_files(tmp_path: Path) -> None:
    for name in (LME_MULTI, LME_ASSISTANT):
        shutil.copy(LME / name, tmp_path / name)
    data = load_longmemeval(tmp_path)
    assert data.size == 2
    multi, assistant = list(data.conversations)  # sorted by file name: 46_... then 47_...
    multi, assistant = (multi, assistant) if multi.conversation_id == "00ca467f" else (assistant, multi)
    q = multi.questions[0]
    assert q.category == "multi-session" and q.skip_reason is None
    assert q.evidence_sessions == {"answer_39900a0a_1", "answer_39900a0a_3"}  # _2 has no has_answer turn
    assert q.evidence_turns == {"answer_39900a0a_1_1", "answer_39900a0a_3_1"}
    assert len(multi.sessions) == 47
    assert sum(t.indexed for s in multi.sessions for t in s.turns) == 243  # user turns only
    assert all(t.indexed == (t.role == "user") for s in multi.sessions for t in s.turns)
    assert multi.sessions[0].observed_at == "2023-03-27T00:49:00Z"
    skipped = assistant.questions[0]
    assert skipped.category == "single-session-assistant"
    assert skipped.skip_reason == "no user-turn evidence"


def test_longmemeval_abstention_is_skipped() -> None:
    entry = json.loads((LME / LME_MULTI).read_text())
    entry["question_id"] += "_abs"
    assert longmemeval_conversation(entry).questions[0].skip_reason == "abstention"
    assert longmemeval_date("2023/05/20 (Sat) 00:59") == "2023-05-20T00:59:00Z"


def test_granularities(conv26: Conversation) -> None:
    turns = documents(conv26, "turn")
    assert len(turns) == 419 and turns[0].turn_ids == ("D1:1",) and turns[0].session_id == "D1"
    pairs = documents(conv26, "pair")
    assert pairs[0].turn_ids == ("D1:1", "D1:2")
    assert pairs[0].text.splitlines()[1].startswith("Melanie: ")
    assert sorted(t for d in pairs for t in d.turn_ids) == sorted(t for d in turns for t in d.turn_ids)
    sessions = documents(conv26, "session")
    assert {d.session_id for d in sessions} == {f"D{n}" for n in range(1, 20)}
    assert all(len(d.text) <= DOC_CAP for d in sessions)
    assert sorted(t for d in sessions for t in d.turn_ids) == sorted(t for d in turns for t in d.turn_ids)


def test_longmemeval_pair_puts_the_reply_in_assistant_text() -> None:
    conv = longmemeval_conversation(json.loads((LME / LME_MULTI).read_text()))
    turns = {t.turn_id: t for s in conv.sessions for t in s.turns}
    pair = next(d for d in documents(conv, "pair") if len(d.text) < 1000)
    user = turns[pair.turn_ids[0]]
    reply = turns[pair.turn_ids[0].rsplit("_", 1)[0] + "_" + str(int(pair.turn_ids[0].rsplit("_", 1)[1]) + 1)]
    assert (user.role, reply.role) == ("user", "assistant")
    assert len(pair.turn_ids) == 1 and pair.text == user.text and pair.reply == reply.text
    [body] = episodes(pair, _scope(), 0, "test")
    assert body.user_text == user.text and body.summary == user.text and body.assistant_text == reply.text


def test_long_documents_become_several_episodes() -> None:
    text = ("word " * 1500).strip()  # 7,499 characters
    pieces = split_text(text)
    assert len(pieces) == 2 and all(len(p) <= DOC_CAP for p in pieces)
    assert " ".join(pieces) == text
    conv = longmemeval_conversation(json.loads((LME / LME_MULTI).read_text()))
    long_doc = max(documents(conv, "turn"), key=lambda d: len(d.text))
    bodies = episodes(long_doc, _scope(), 5, "test")
    assert len(long_doc.text) > DOC_CAP and len(bodies) == len(split_text(long_doc.text)) > 1
    assert [b.turn_index for b in bodies] == list(range(5, 5 + len(bodies)))
    assert all(b.summary == b.user_text and len(b.summary) <= DOC_CAP for b in bodies)


def _scope() -> dict[str, object]:
    return {
        "agentId": "a",
        "profileId": "p",
        "privacyScope": "private",
        "participantScopeHash": "0" * 64,
        "sandboxEligible": False,
    }


def test_longmemeval_accepts_one_file_holding_a_list(tmp_path: Path) -> None:
    entries = [json.loads((LME / name).read_text()) for name in (LME_MULTI, LME_ASSISTANT)]
    combined = tmp_path / "longmemeval_s.json"
    combined.write_text(json.dumps(entries))
    data = load_longmemeval(combined)
    assert data.size == 2
    assert [c.conversation_id for c in data.conversations] == ["00ca467f", "0e5e2d1a"]
