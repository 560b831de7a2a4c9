"""Conflict judgement: each candidate against the nearest current facts of its scope.

Neighbours come from recall over the scope's current facts (both arms, so a fact written a
moment ago and not yet embedded is found by its words). The model names them by the refs it was
shown; a verdict naming anything else (an id from another scope, a ref shown with another
candidate) is ignored and reported, so a verdict can only ever act on a fact of the writer's
scope. ``supersedes`` and ``duplicate`` act only at or above the policy's threshold; the age
guard is the lifecycle's, applied when the fact is written or approved.
"""

from __future__ import annotations

from engramdb import clock
from engramdb.core.assist.extraction import Candidate, Judged, value_of
from engramdb.core.assist.llm import answers, prompts
from engramdb.core.assist.work import Work
from engramdb.core.recall import recall
from engramdb.storage.port import CandidateFilter, MemoryRecord

JUDGE = prompts.load("judge", answers.envelope("verdicts", answers.Verdict), answers.items_under("verdicts"))


def neighbours(work: Work, candidates: list[Candidate]) -> list[list[MemoryRecord]]:
    """The nearest current facts of the scope for each candidate (``policy.model_neighbours`` each):
    recall over facts, the candidates embedded in one batch, a small pool, no episode features."""
    limit = work.policy.model_neighbours
    filt = CandidateFilter(statuses=("active",), sources=("MEMORY_FACT",), expires_after=clock.now_text())
    settings = work.retrieval.model_copy(
        update={
            "candidate_pool": max(4 * limit, 20),
            "neighbour_weight": 0.0,
            "second_neighbour_weight": 0.0,
            "date_weight": 0.0,
        }
    )
    vectors = work.embedder.embed([c.text for c in candidates])
    found: list[list[MemoryRecord]] = []
    with work.tenant.reading() as tenant:
        for candidate, vector in zip(candidates, vectors, strict=True):
            candidate.vector = vector
            outcome = recall(
                tenant,
                work.embedder,
                scope_key=work.scope_key,
                query=candidate.text,
                filt=filt,
                limit=limit,
                settings=settings,
                vector=vector,
            )
            found.append([h.record for h in outcome.hits])
    return found


def judge(work: Work, candidates: list[Candidate]) -> None:
    """Ask the model how each candidate stands to its neighbours; mark targets and duplicates."""
    if work.policy.model_neighbours == 0 or not candidates:
        return
    work.pause()  # the candidates' embedding and their neighbours' search are this job's biggest step
    shown = neighbours(work, candidates)
    refs: dict[str, MemoryRecord] = {}
    asked = []
    for index, (candidate, near) in enumerate(zip(candidates, shown, strict=True)):
        same = next((n for n in near if value_of(n.text) == candidate.value), None)
        if same is not None:  # the same value in another slot: no need to ask
            candidate.duplicate_of = same
            continue
        if near:
            asked.append(
                {
                    "candidate": index,
                    "subjectKey": candidate.subject_key,
                    "kind": candidate.kind,
                    "text": candidate.text,
                    "validFrom": candidate.turn.observed_at,
                    "neighbours": [_shown(n, refs) for n in near],
                }
            )
    if not asked:
        return
    good, bad = answers.read_items(answers.Verdict, work.ask(JUDGE, {"candidates": asked}))
    for _, why in bad:
        for candidate in candidates:
            candidate.ignored.append(f"a verdict was not usable: {why}")
    for _, verdict in good:
        _take(work, candidates, shown, refs, verdict)
    for candidate in candidates:
        _decide(work, candidate)


def _shown(record: MemoryRecord, refs: dict[str, MemoryRecord]) -> dict[str, object]:
    ref = next((r for r, n in refs.items() if n.rowid == record.rowid), None) or f"n{len(refs) + 1}"
    refs[ref] = record
    return {
        "ref": ref,
        "subjectKey": record.subject_key,
        "kind": record.kind,
        "text": record.text,
        "validFrom": record.valid_from,
    }


def _take(
    work: Work,
    candidates: list[Candidate],
    shown: list[list[MemoryRecord]],
    refs: dict[str, MemoryRecord],
    verdict: answers.Verdict,
) -> None:
    if verdict.candidate >= len(candidates):
        return  # names no candidate: nothing it could act on
    candidate = candidates[verdict.candidate]
    record = refs.get(verdict.ref)
    if record is None or all(record.rowid != n.rowid for n in shown[verdict.candidate]):
        candidate.ignored.append(
            f"a {verdict.verdict} verdict named {verdict.ref[:80]!r}, which is no fact shown "
            "with this candidate: ignored"
        )
        return
    threshold = work.policy.model_supersede_threshold
    acts = verdict.verdict in ("refines", "coexists") or verdict.confidence >= threshold
    note = None if acts else f"below the policy's threshold {threshold:g}: both facts stand"
    candidate.judged.append(Judged(record, verdict.verdict, verdict.confidence, verdict.reason[:1000], acts, note))


def _decide(work: Work, candidate: Candidate) -> None:
    """At most one fact to replace (the surest supersedes verdict), or a duplicate."""
    duplicates = [j for j in candidate.judged if j.verdict == "duplicate" and j.acts]
    if duplicates:
        candidate.duplicate_of = max(duplicates, key=lambda j: j.confidence).neighbour
        return
    supersedes = sorted(
        (j for j in candidate.judged if j.verdict == "supersedes" and j.acts), key=lambda j: -j.confidence
    )
    for extra in supersedes[1:]:
        extra.acts = False
        extra.note = f"one fact is replaced per write: {supersedes[0].neighbour.memory_id} was surer"
    if supersedes:
        chosen = supersedes[0]
        candidate.target_id = chosen.neighbour.memory_id
        if (chosen.neighbour.valid_from or "") > candidate.turn.observed_at:  # the lifecycle's age guard order
            chosen.note = (
                f"the age guard keeps the newer fact current (it holds from "
                f"{chosen.neighbour.valid_from}; this one from {candidate.turn.observed_at}): the "
                "candidate is kept as history"
            )
