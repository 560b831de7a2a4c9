"""Writers for the kill loop: threads that send episodes, episode batches, facts and corrections over
HTTP, each write retried with the same body until the server acknowledges it (2xx), and a ledger of
what was acknowledged.

A write cut off by the kill is *in doubt*: it may or may not have been committed. The writer sends
it again, unchanged, once a server answers (as any client with an outbox would): writes are
idempotent by their deterministic id, so a write that was committed answers 200 ``exists`` and one
that was not is created then. Each slot's writes are sequential, so the last acknowledged one is
the slot's current value.
"""

from __future__ import annotations

import datetime as dt
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import httpx

from engramdb.contract.canonical import event_id

RUNTIME = "custom"
SCOPE: dict[str, Any] = {
    "agentId": "fault-agent",
    "profileId": "fault-profile",
    "privacyScope": "private",
    "participantScopeHash": "f" * 64,
    "sandboxEligible": False,
}
# Single-valued slots (subject, kind): none of these kinds is multi-valued by default.
SLOTS = (("user", "location"), ("user", "employer"), ("project", "deadline"))
BATCH = 10
VALID_BASE = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


@dataclass(frozen=True)
class Write:
    """One acknowledged write: its id, what it carried, and how it went."""

    id: str
    kind: str  # episode, fact or correction
    text: str
    slot: tuple[str, str] | None = None
    step: int = 0
    attempts: int = 1
    ack_lost: bool = False  # an earlier attempt was cut off, and the retry found it stored


@dataclass
class Ledger:
    """Everything the writers were told, guarded by one lock."""

    writes: list[Write] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)
    unexpected: list[str] = field(default_factory=list)  # answers no retry can fix (4xx), as text
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, write: Write) -> None:
        with self.lock:
            self.writes.append(write)
            self.counts[f"acknowledged_{write.kind}"] += 1
            if write.ack_lost:
                self.counts["ack_lost_but_stored"] += 1

    def count(self, name: str, n: int = 1) -> None:
        with self.lock:
            self.counts[name] += n

    def refuse(self, what: str) -> None:
        with self.lock:
            self.unexpected.append(what)


def episode_body(session: str, turn: int, user: str) -> dict[str, Any]:
    return {
        "runtime": RUNTIME,
        "externalSessionId": session,
        "turnIndex": turn,
        "userText": user,
        "assistantText": f"Noted ({session} {turn}).",
        "conversationKind": "direct",
        "visibility": "participant",
        "trustClass": "trusted",
        "originClass": "conversation",
        "observedAt": "2026-08-18T00:00:00Z",
        "provenance": "fault-test",
    }


def episode_id(body: dict[str, Any]) -> str:
    return event_id(
        runtime=RUNTIME,
        agent_id=SCOPE["agentId"],
        profile_id=SCOPE["profileId"],
        external_session_id=body["externalSessionId"],
        turn_index=body["turnIndex"],
        user_text=body["userText"],
        assistant_text=body["assistantText"],
    )


class Writer(threading.Thread):
    """One sequential stream of writes; subclasses say what the next write is."""

    name_prefix = "writer"

    def __init__(self, url: str, token: str, ledger: Ledger, stop: threading.Event, hard_stop: threading.Event) -> None:
        super().__init__(daemon=True, name=self.name_prefix)
        # No keep-alive: a connection is opened per request, so a transport error after the
        # connection was made means the server died holding this request, not a stale socket.
        self.http = httpx.Client(
            base_url=url,
            headers={"Authorization": f"Bearer {token}"},
            timeout=30.0,
            limits=httpx.Limits(max_keepalive_connections=0),
        )
        self.ledger, self.stop, self.hard_stop = ledger, stop, hard_stop
        self.failure: BaseException | None = None

    def run(self) -> None:
        try:
            step = 0
            while not self.stop.is_set():
                self.write(step)
                step += 1
        except _Stopped:
            pass
        except BaseException as error:  # reported by the run, never swallowed
            self.failure = error
        finally:
            self.http.close()

    def write(self, step: int) -> None:
        raise NotImplementedError

    def send(self, path: str, body: dict[str, Any]) -> tuple[dict[str, Any], int, bool]:
        """POST until a 2xx; return the answer, the attempts, and whether an attempt was cut off."""
        attempts, cut = 0, False
        while True:
            if self.hard_stop.is_set():
                raise _Stopped
            attempts += 1
            try:
                answer = self.http.post(path, json=body)
            except httpx.ConnectError:
                self.ledger.count("refused_connections")  # nothing sent: the server is down
                time.sleep(0.02)
                continue
            except httpx.TransportError:
                self.ledger.count("interrupted_requests")  # sent, and no answer came: in doubt
                cut = True
                time.sleep(0.02)
                continue
            if answer.status_code in (200, 201):
                return answer.json(), attempts, cut
            if answer.status_code in (429, 503) or answer.status_code >= 500:
                self.ledger.count(f"answered_{answer.status_code}")
                time.sleep(0.05)
                continue
            self.ledger.refuse(f"{path} answered {answer.status_code}: {answer.text[:300]}")
            raise _Stopped


class _Stopped(Exception):
    """The run is over, or the server refused a write no retry can fix."""


class EpisodeWriter(Writer):
    """One episode per request (``POST /v1/episodes``)."""

    name_prefix = "episodes"

    def write(self, step: int) -> None:
        text = f"Fault test turn {step}: the value of register {step} is {step * 7}."
        body = episode_body("fault-single", step, text)
        answer, attempts, cut = self.send("/v1/episodes", body)
        if answer["id"] != episode_id(body):
            self.ledger.refuse(f"episode {step} stored as {answer['id']}, not its deterministic id")
        self.ledger.add(
            Write(
                answer["id"],
                "episode",
                body["userText"],
                step=step,
                attempts=attempts,
                ack_lost=cut and not answer["created"],
            )
        )


class BatchWriter(Writer):
    """Ten episodes per request (``POST /v1/episodes/batch``); acknowledged when every item is."""

    name_prefix = "batches"

    def write(self, step: int) -> None:
        bodies = [
            episode_body(
                "fault-batch",
                step * BATCH + i,
                f"Fault test batch {step} item {i}: colour {i} is number {step * BATCH + i}.",
            )
            for i in range(BATCH)
        ]
        while True:
            answer, attempts, cut = self.send("/v1/episodes/batch", {"episodes": bodies})
            statuses = [item["status"] for item in answer["results"]]
            if all(status in (200, 201) for status in statuses):
                break
            self.ledger.count("batch_items_refused", sum(s not in (200, 201) for s in statuses))
            if any(400 <= s < 500 and s not in (429,) for s in statuses):
                self.ledger.refuse(f"batch {step} items answered {statuses}: {answer['results']}"[:600])
                raise _Stopped
        for body, item in zip(bodies, answer["results"], strict=True):
            if item["id"] != episode_id(body):
                self.ledger.refuse(f"batch {step} item stored as {item['id']}, not its deterministic id")
            self.ledger.add(
                Write(
                    item["id"],
                    "episode",
                    body["userText"],
                    step=step,
                    attempts=attempts,
                    ack_lost=cut and not item["created"],
                )
            )


class SlotWriter(Writer):
    """One single-valued slot: a new value (newer valid time), then another, then a correction of the
    current one, and again. Each write supersedes the one before it."""

    name_prefix = "slot"

    def __init__(self, slot: tuple[str, str], *args: Any) -> None:
        super().__init__(*args)
        self.slot = slot
        self.name = f"slot-{slot[0]}-{slot[1]}"
        self.current: str | None = None

    def write(self, step: int) -> None:
        subject, kind = self.slot
        source = f"fault-{subject}-{kind}-{step}"
        body: dict[str, Any] = {"sourceEventId": source}
        if step % 3 == 2 and self.current is not None:
            text = f"The {subject}'s {kind} was corrected at step {step}."
            body |= {"text": text, "reason": "fault test correction"}
            answer, attempts, cut = self.send(f"/v1/facts/{self.current}/correct", body)
            write_kind = "correction"
        else:
            text = f"The {subject}'s {kind} is value {step}."
            body |= {
                "runtime": RUNTIME,
                "text": text,
                "kind": kind,
                "subjectKey": subject,
                "confidence": 0.9,
                "validFrom": (VALID_BASE + dt.timedelta(hours=step)).isoformat(),
                "visibility": "participant",
                "trustClass": "trusted",
                "provenance": "fault-test",
            }
            answer, attempts, cut = self.send("/v1/facts", body)
            write_kind = "fact"
        if answer["memory"]["status"] != "active":
            self.ledger.refuse(f"{self.name} step {step} was stored as {answer['memory']['status']}, not current")
        self.current = answer["id"]
        self.ledger.add(
            Write(
                answer["id"],
                write_kind,
                text,
                slot=self.slot,
                step=step,
                attempts=attempts,
                ack_lost=cut and not answer["created"],
            )
        )
