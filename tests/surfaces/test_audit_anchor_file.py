"""The anchor file as a crash and an attacker leave it (issue 30, findings 6 and 8), on both backends.

A crash mid-append leaves a torn last line: reading it must warn and go on (never a 500 or a
traceback), and the next anchor must start a line of its own. A missing or emptied anchor file
verifies with a warning that the chain could not be anchored; a fresh data folder verifies clean.
"""

from __future__ import annotations

import json
from pathlib import Path

from engramdb.contract.writes import EpisodeWrite
from engramdb.core.auth import Caller
from engramdb.core.service import MemoryService
from engramdb.models.admin import AuditVerdict
from engramdb.storage.port import Store
from tests.conftest import LiveServer
from tests.factories import episode_body
from tests.surfaces.test_audit_cli import SCOPE, _env, _seed, _verify


def _write(service: MemoryService, operator: Caller, turn: int) -> None:
    body = episode_body(f"turn {turn}", turn=turn, session="torn", scope=SCOPE)
    service.writes.write_episode(operator, EpisodeWrite.model_validate(body))


def _two_anchors(service: MemoryService, operator: Caller) -> tuple[bytes, bytes]:
    """A verified chain anchored twice; the anchor file split into its lines before the last and its last."""
    _seed(service, operator)
    assert service.admin.verify_audit(operator).verified
    _write(service, operator, 100)
    assert service.admin.verify_audit(operator).verified
    whole = service.shared.anchors.file("t1").read_bytes()
    lines = whole.splitlines(keepends=True)
    assert len(lines) == 2 and whole.endswith(b"\n"), whole  # the positive control: two whole lines
    return lines[0], lines[1]


def _warned(verdict: AuditVerdict, *words: str) -> None:
    text = " ".join(verdict.warnings)
    for word in words:
        assert word in text, verdict


def test_a_torn_last_line_is_ignored_and_never_appended_onto_at_every_offset(
    service: MemoryService, operator: Caller
) -> None:
    before, last = _two_anchors(service, operator)
    path = service.shared.anchors.file("t1")
    for cut in range(len(last)):  # 0: nothing of the last line made it; len - 1: all but its newline
        path.write_bytes(before + last[:cut])
        _write(service, operator, 200 + cut)  # a new head, which verifying anchors
        verdict = service.admin.verify_audit(operator)
        assert verdict.verified, (cut, verdict)
        torn = 0 < cut < len(last) - 1  # the whole JSON without its newline is an anchor all the same
        if torn:
            _warned(verdict, "line 2", "torn")
        else:
            assert verdict.warnings == [], (cut, verdict)
        kept = before + last[:cut] + (b"\n" if cut else b"")  # what was there, on lines of its own
        now = path.read_bytes()
        assert now.startswith(kept) and now.endswith(b"\n") and now.count(b"\n") == kept.count(b"\n") + 1, (cut, now)
        appended = json.loads(now[len(kept) :])  # the new anchor: one whole line after them
        head = service.shared.store.tenant("t1").audit_entries(0, 10_000)[-1]
        assert (appended["seq"], appended["hash"]) == (head.seq, head.hash), (cut, now)
        again = service.admin.verify_audit(operator)
        assert again.verified and again.checked == head.seq, (cut, again)


def test_the_server_answers_a_torn_anchor_file_with_a_warning(server: LiveServer) -> None:
    with server.client(server.key()) as agent:
        assert agent.post("/v1/episodes", json=episode_body()).status_code == 201
    with server.client(server.key(role="admin")) as http:
        first = http.get("/v1/audit/verify")
        assert first.status_code == 200 and first.json()["verified"], first.text
        path = server.app.state.service.shared.anchors.file("t1")
        line = path.read_bytes().splitlines()[-1]
        with path.open("ab") as f:
            f.write(line[: len(line) // 2])  # a crash halfway through the next anchor
        for _ in range(2):  # every call, not only the first
            torn = http.get("/v1/audit/verify")
            assert torn.status_code == 200, torn.text
            assert torn.json()["verified"] and "torn" in " ".join(torn.json()["warnings"]), torn.json()


def test_the_cli_warns_of_a_torn_anchor_file_without_a_traceback(service: MemoryService, operator: Caller) -> None:
    store = _seed(service, operator)
    first = _verify(store)  # anchors the head, in the CLI's own anchor folder
    assert first.returncode == 0 and "could not be anchored" in first.stderr, first.stdout + first.stderr
    held = _verify(store)
    assert held.returncode == 0 and held.stderr == "", held.stdout + held.stderr  # the positive control
    files = list(_anchor_folder(store).glob("**/t1.jsonl"))
    assert len(files) == 1, files
    line = files[0].read_bytes().splitlines()[-1]
    with files[0].open("ab") as f:
        f.write(line[:17])
    torn = _verify(store)
    assert torn.returncode == 0, torn.stdout + torn.stderr
    assert "Traceback" not in torn.stderr and "torn" in torn.stderr, torn.stderr


def test_a_missing_or_emptied_anchor_file_is_warned_of(service: MemoryService, operator: Caller) -> None:
    _seed(service, operator)
    first = service.admin.verify_audit(operator)
    assert first.verified and first.anchored is False  # never anchored before: said so
    _warned(first, "could not be anchored", "no anchor file")
    held = service.admin.verify_audit(operator)
    assert held.verified and held.anchored and held.warnings == [], held  # the positive control
    path = service.shared.anchors.file("t1")
    path.write_bytes(b"")
    emptied = service.admin.verify_audit(operator)
    assert emptied.verified and emptied.anchored is False, emptied
    _warned(emptied, "could not be anchored", "empty")
    path.unlink()
    missing = service.admin.verify_audit(operator)
    assert missing.verified and missing.anchored is False, missing
    _warned(missing, "could not be anchored", "no anchor file")


def test_a_fresh_data_folder_verifies_clean(service: MemoryService, operator: Caller) -> None:
    store = service.shared.store
    fresh = _verify(store)  # no write yet: nothing to anchor, nothing to warn of
    assert fresh.returncode == 0 and fresh.stderr == "", fresh.stdout + fresh.stderr
    assert "verified: 0 entries" in fresh.stdout, fresh.stdout
    _seed(service, operator)
    unanchored = _verify(store)  # the positive control: entries and no anchor are warned of
    assert unanchored.returncode == 0 and "could not be anchored" in unanchored.stderr, unanchored.stderr


def _anchor_folder(store: Store) -> Path:
    return Path(_env(store)["ENGRAM_HOME"])
