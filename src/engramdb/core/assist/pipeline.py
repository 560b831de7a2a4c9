"""Extraction end to end: propose, screen, judge, write; the same for a request and a queued job."""

from __future__ import annotations

from engramdb.core.assist import extraction, judgement, writing
from engramdb.core.assist.extraction import Turn
from engramdb.core.assist.work import Work
from engramdb.models.assist import ExtractResult

VERSIONS = (extraction.EXTRACT.version, judgement.JUDGE.version)


def extract(work: Work, turns: list[Turn]) -> ExtractResult:
    """Derive facts from ``turns`` into the run's scope; return what became of each candidate.

    The model calls happen outside any transaction; the writes, links, verdict audits and the
    call ledger commit together at the end.
    """
    candidates, skipped = extraction.propose(work, turns)
    work.pause()
    fresh, dropped = extraction.screen(work, candidates)
    judgement.judge(work, fresh)
    work.pause()
    written = writing.write(work, fresh, VERSIONS)
    versions = {"extract": VERSIONS[0], "judge": VERSIONS[1]}
    return ExtractResult(
        items=[*written, *dropped, *skipped],
        turns=len(turns),
        model=work.chat.model,
        prompt_versions=versions,
        usage=work.usage(),
    )
