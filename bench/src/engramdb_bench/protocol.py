"""The evaluation protocol in words, as the result document states it beside the numbers."""

from __future__ import annotations

from collections.abc import Sequence

ARMS_NOTE = (
    "bm25 and vector: the production recall with the other arm's fusion weight and the neighbour lift "
    "at 0 (the other arm's rows can still fill the tail when the weighted arm returns fewer than "
    "limit); hybrid: the default retrieval settings; expand: hybrid following relationships one hop from the "
    "top three hits (retrieval.expandTop = 3); plain: hybrid with the time words, newer-first and the "
    "entity lift off (retrieval.timeWordsWeight = 0, newerFirst = false, entityWeight = 0)"
)
TURN_RECALL_NOTE = "fraction of the question's evidence turns covered by the first k documents"


def protocol(dataset: str, granularity: str, ks: Sequence[int]) -> dict[str, str]:
    """Return the notes on documents, arms, turn recall, session ranking and skipped questions."""
    return {
        "documents": DOCUMENT_NOTES[(dataset, granularity)],
        "arms": ARMS_NOTE,
        "turnRecall": TURN_RECALL_NOTE,
        "sessionRanking": f"the server's session ranking (recall with sessions={max(ks)}): sessions "
        "ranked by their best episode among both arms' candidates "
        "(sessionsRetrieved: how many sessions that gives)",
        "skipped": SKIP_NOTES[dataset],
    }


DOCUMENT_NOTES = {
    ("locomo", "turn"): "one episode per turn, text 'Speaker: text'",
    ("locomo", "pair"): "one episode per two consecutive turns of a session, 'Speaker: text' lines",
    ("locomo", "session"): "one episode per session ('Speaker: text' lines), split at turn boundaries "
    "into documents of at most 4,000 characters",
    ("longmemeval", "turn"): "one episode per user turn (the protocol's turn granularity); "
    "assistant turns are not indexed",
    ("longmemeval", "pair"): "one episode per user turn with the assistant reply that follows it as "
    "assistantText (indexes assistant text, unlike the protocol)",
    ("longmemeval", "session"): "one episode per session of user turns (the protocol's session granularity), "
    "split at turn boundaries into documents of at most 4,000 characters",
    ("beam", "pair"): "one episode per user message with the assistant's answer after it, written as the SDK "
    "writes a completed turn (capture rules, summary, mixed trust), dated at its batch's time anchor; "
    "a document's id is its user message's id, and an assistant message in source_chat_ids counts as its episode",
}
SKIP_NOTES = {
    "locomo": "questions without usable evidence (no evidence id naming a turn); "
    "category 5 (adversarial) is reported apart from 'all'",
    "longmemeval": "abstention questions (_abs) and questions whose answer sessions have no user turn "
    "marked has_answer, as LongMemEval's retrieval protocol does",
    "beam": "abstention questions (no source_chat_ids); updateAboveOriginal (knowledge_update and "
    "contradiction_resolution whose two statements are different episodes): whether the newer statement's "
    "episode ranks above the older's (a statement in the first 20 ranks above one that is not; neither: no)",
}
