"""An import: a file read as turns, the turns made episodes, written in batches through
``write_episode_batch`` (a server, or this process), with a count of what happened."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engramdb.errors import InvalidInputError, ModelNotConfiguredError
from engramdb.integrations.imports import chatgpt, claude_code, jsonl, mem0, zep
from engramdb.integrations.imports.turns import ImportedTurn, Reading, episode_body
from engramdb.integrations.target import Target
from engramdb.models.inputs import build_inputs
from engramdb.models.memories import EpisodeBatchResult
from engramdb.models.operations import BY_NAME
from engramdb.sdk.capture import Refused

SOURCES: dict[str, Callable[[Path], Reading]] = {
    "claude-code": claude_code.read,
    "chatgpt": chatgpt.read,
    "mem0": mem0.read,
    "zep": zep.read,
    "jsonl": jsonl.read,
}
BATCH = 100  # the most one write_episode_batch takes
Progress = Callable[[int, int], None]  # (turns done, turns in all)


@dataclass
class ImportReport:
    """What an import read, wrote (or, on a dry run, would write) and passed over."""

    source: str
    path: str
    dry_run: bool
    turns: int = 0  # turns read from the file
    episodes: int = 0  # episodes sent (turns the capture rules kept)
    created: int = 0  # new episodes (a dry run: that would be new)
    existing: int = 0  # stored already: nothing written
    refused: list[dict[str, Any]] = field(default_factory=list)  # items the server refused, with why
    skipped: Counter[str] = field(default_factory=Counter)  # what was passed over, by reason
    redacted: Counter[str] = field(default_factory=Counter)  # turns with a redaction, by kind
    extraction_jobs: set[str] = field(default_factory=set)
    extract: bool | None = None  # whether extraction was queued (None: not asked, or a dry run)

    def wire(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "path": self.path,
            "dryRun": self.dry_run,
            "turns": self.turns,
            "episodes": self.episodes,
            "created": self.created,
            "existing": self.existing,
            "refused": self.refused,
            "skipped": dict(self.skipped),
            "redacted": dict(self.redacted),
            "extractionJobs": len(self.extraction_jobs),
            "extract": self.extract,
        }


def import_file(
    target: Target,
    source: str,
    path: str | Path,
    *,
    scope: Mapping[str, Any] | None = None,
    dry_run: bool = False,
    extract: bool | None = None,
    batch_size: int = BATCH,
    progress: Progress | None = None,
) -> ImportReport:
    """Import a file of ``source``'s format as episodes, each in ``scope`` (scope fields, or a
    ``userId``; what the key fixes may be left out), at its original time; return what happened.

    Importing the same file again writes nothing (the episodes' ids are their content's). A dry run
    asks the server what would be written and writes nothing. ``extract``: queue fact extraction
    for the new episodes (None: when the server has a model; True: 501 without one).
    """
    if source not in SOURCES:
        raise InvalidInputError(f"unknown source {source!r}: one of {', '.join(SOURCES)}", field="source")
    if not 1 <= batch_size <= BATCH:
        raise InvalidInputError(f"batch size is 1 to {BATCH}", field="batch_size")
    try:
        reading = SOURCES[source](Path(path))
    except (ValueError, TypeError, AttributeError, KeyError) as error:  # not UTF-8, not JSON, not the source's shape
        raise InvalidInputError(f"{path} cannot be read as a {source} file: {error}", field="path") from error
    report = ImportReport(source, str(path), dry_run, turns=len(reading.turns), skipped=Counter(reading.skipped))
    report.extract = None if dry_run else extract
    chunks = [reading.turns[i : i + batch_size] for i in range(0, len(reading.turns), batch_size)]
    # The next batch is made (parsed, redacted) while this one is written: the capture rules' work
    # overlaps the server's, so an import costs little more than writing the same episodes.
    with ThreadPoolExecutor(1, thread_name_prefix="engram-import") as making:
        ahead = making.submit(_bodies, chunks[0], source) if chunks else None
        for n in range(len(chunks)):
            assert ahead is not None
            made = ahead.result()
            ahead = making.submit(_bodies, chunks[n + 1], source) if n + 1 < len(chunks) else None
            _merge(report, made)
            if made.bodies:
                answer = _write(target, made.bodies, scope, report, allow_fallback=extract is None)
                _tally(report, made.bodies, answer)
            if progress is not None:
                progress(min((n + 1) * batch_size, len(reading.turns)), len(reading.turns))
    return report


@dataclass
class _Made:
    """A batch's episode bodies, and what the capture rules did to its turns."""

    bodies: list[dict[str, Any]] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    redacted: Counter[str] = field(default_factory=Counter)


def _bodies(turns: Sequence[ImportedTurn], source: str) -> _Made:
    made = _Made()
    for turn in turns:
        result = episode_body(turn, f"engram-import:{source}")
        if isinstance(result, Refused):
            made.skipped[result.reason] += 1
            continue
        body, redacted = result
        made.bodies.append(body)
        made.redacted.update(redacted)
    return made


def _merge(report: ImportReport, made: _Made) -> None:
    report.episodes += len(made.bodies)
    report.skipped.update(made.skipped)
    report.redacted.update(made.redacted)


def _write(
    target: Target,
    bodies: Sequence[dict[str, Any]],
    scope: Mapping[str, Any] | None,
    report: ImportReport,
    *,
    allow_fallback: bool,
) -> EpisodeBatchResult:
    op = BY_NAME["write_episode_batch"]
    body: dict[str, Any] = {"episodes": list(bodies), **({"scope": dict(scope)} if scope else {})}
    extract = report.extract is not False and not report.dry_run
    options = {"dryRun": report.dry_run, "extract": extract}
    try:
        answer: EpisodeBatchResult = target.call(op, build_inputs(op, options, body=body))
    except ModelNotConfiguredError:
        if not allow_fallback:
            raise
        report.extract = False  # no model on the server: the episodes alone, as asked for by default
        answer = target.call(op, build_inputs(op, {**options, "extract": False}, body=body))
    if extract and report.extract is None:
        report.extract = True
    return answer


def _tally(report: ImportReport, bodies: Sequence[dict[str, Any]], answer: EpisodeBatchResult) -> None:
    for body, result in zip(bodies, answer.results, strict=True):
        status = result.get("status")
        if status == 201:
            report.created += 1
        elif status == 200:
            report.existing += 1
        else:
            where = {"session": body["externalSessionId"], "turnIndex": body["turnIndex"]}
            report.refused.append({**where, **{k: v for k, v in result.items() if k in ("status", "code", "message")}})
        if result.get("extractionJobId"):
            report.extraction_jobs.add(str(result["extractionJobId"]))
