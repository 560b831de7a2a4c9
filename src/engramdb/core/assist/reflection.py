"""Reflection: higher-level statements over a scope's current, stated facts.

Only facts that are current and of origin ``stated`` are evidence: a derived fact (an extracted
fact, a reflection, a merge) is never used to derive another, and naming one is refused. Each
reflection is a fact of kind ``reflection``, origin ``derived`` (the trust policy decides: by
default it waits for review), with a DERIVED_FROM link to each fact it rests on.
"""

from __future__ import annotations

from collections import Counter

from engramdb import clock
from engramdb.contract.canonical import sha256_hex
from engramdb.core.assist import links, writing
from engramdb.core.assist.extraction import Candidate, Turn, screen
from engramdb.core.assist.llm import answers, prompts
from engramdb.core.assist.work import Work
from engramdb.errors import ConflictError, NotFoundError
from engramdb.models.assist import DerivedItem
from engramdb.models.derive import ReflectRequest
from engramdb.storage.port import CandidateFilter, MemoryRecord, Transaction

REFLECT = prompts.load(
    "reflect", answers.envelope("reflections", answers.ReflectionItem), answers.items_under("reflections")
)
KIND = "reflection"
_TRUST_ORDER = ("untrusted", "mixed", "trusted")


def evidence(work: Work, body: ReflectRequest) -> list[MemoryRecord]:
    """The facts a reflection may rest on: current and stated, newest first."""
    if body.fact_ids is not None:
        return [_named(work, fact_id) for fact_id in body.fact_ids]
    current = work.tenant.list_facts(
        work.scope_key,
        subject_key=body.subject_key,
        kind=None,
        below=None,
        limit=1000,
        filt=CandidateFilter(statuses=("active",), sources=("MEMORY_FACT",), expires_after=clock.now_text()),
    )
    after = clock.normalize(body.after) if body.after else None
    before = clock.normalize(body.before) if body.before else None
    chosen = [
        f
        for f in current
        if f.origin == "stated"
        and (after is None or (f.valid_from or "") >= after)
        and (before is None or (f.valid_from or "") < before)
    ]
    return chosen[: body.limit]


def _named(work: Work, fact_id: str) -> MemoryRecord:
    fact = work.tenant.get_memory(work.scope_key, "MEMORY_FACT", fact_id)
    if fact is None:
        raise NotFoundError(f"no fact {fact_id} in this scope", field="factIds", id=fact_id)
    if fact.origin != "stated":
        raise ConflictError(
            f"fact {fact_id} is derived (a model wrote it): a derived fact is never evidence for another derivation",
            field="factIds",
            id=fact_id,
            origin=fact.origin,
        )
    if fact.status != "active":
        raise ConflictError(
            f"fact {fact_id} is {fact.status}, not current: only current facts are evidence",
            field="factIds",
            id=fact_id,
            status=fact.status,
        )
    return fact


def reflect(work: Work, body: ReflectRequest, facts: list[MemoryRecord]) -> list[DerivedItem]:
    """Ask the model for reflections on ``facts`` and write them; return what became of each."""
    refs = {f"e{i + 1}": fact for i, fact in enumerate(facts)}
    data = {
        "subjectKey": body.subject_key,
        "maxReflections": body.max_reflections,
        "facts": [
            {"ref": ref, "subjectKey": f.subject_key, "kind": f.kind, "text": f.text, "validFrom": f.valid_from}
            for ref, f in refs.items()
        ],
    }
    good, bad = answers.read_items(answers.ReflectionItem, work.ask(REFLECT, data))
    skipped = [
        DerivedItem(action="skipped", reason=f"the model's reflection #{i} is not usable: {why}") for i, why in bad
    ]
    candidates = []
    for index, item in good[: body.max_reflections]:
        rests_on = list({id(refs[r]): refs[r] for r in item.evidence if r in refs}.values())
        if not rests_on:
            skipped.append(
                DerivedItem(
                    action="skipped",
                    text=item.text,
                    reason=f"the model's reflection #{index} names no fact it was shown as evidence",
                )
            )
            continue
        subject = body.subject_key or item.subject_key or Counter(f.subject_key for f in rests_on).most_common(1)[0][0]
        candidates.append(_candidate(item, subject or "user", rests_on))
    fresh, dropped = screen(work, candidates)
    written = writing.write(work, fresh, (REFLECT.version,), then=_derived_from(work))
    return [*written, *dropped, *skipped]


def _candidate(item: answers.ReflectionItem, subject: str, rests_on: list[MemoryRecord]) -> Candidate:
    ids = sorted(f.memory_id for f in rests_on)
    trust = min((f.trust_class for f in rests_on), key=_TRUST_ORDER.index)
    turn = Turn(
        f"reflection:{sha256_hex(','.join(ids))[:32]}", "", "", max(f.valid_from or "" for f in rests_on), trust
    )
    return Candidate(turn, subject, KIND, " ".join(item.text.split()), item.confidence, evidence=rests_on)


def _derived_from(work: Work) -> writing.Then:
    def link(tx: Transaction, candidate: Candidate, item: DerivedItem) -> None:
        if item.fact_id is None or item.action in ("duplicate", "refused", "skipped"):
            return
        for fact in candidate.evidence:
            links.record_link(
                tx,
                scope_key=work.scope_key,
                link_type=links.DERIVED_FROM,
                from_id=item.fact_id,
                to_id=fact.memory_id,
                state="applied",
                at=clock.now_text(),
                reason="evidence of a reflection",
                prompt_version=REFLECT.version,
                model=work.chat.model,
            )

    return link
