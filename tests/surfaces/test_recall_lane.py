"""Recalls run in a lane of ``recall_threads`` worker threads: past it they wait their turn, and a
write is served meanwhile; MCP's recall tool and the dashboard's playground take their turn in the same
lane, and a recall whose client hangs up leaves it. A real server over
loopback (MCP through the mcp package's client); the embedder holds every recall's question until
the test lets it go, so what runs at once is counted, not timed."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from functools import partial
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client

from engramdb.api import routes
from engramdb.api.lane import FairLane, Line
from engramdb.api.mcp.tools import recalls
from engramdb.api.rest import cores, recall_lane
from engramdb.api.routes import _turn_unless_gone
from engramdb.config import Settings
from engramdb.core.embedding import FloatMatrix, HashingEmbedder
from engramdb.core.embedding_openai import OpenAICompatibleEmbedder
from engramdb.models.operations import BY_NAME
from engramdb.storage.sqlite.store import SQLiteStore
from tests.conftest import LiveServer
from tests.factories import episode_body, scope_fields

RECALLS = 5
QUESTION = "lane probe"


class HeldQuestions(HashingEmbedder):
    """The hashing embedder, holding each recall's question until ``release`` is set; it counts
    how many questions are held at once (the written episodes pass through unheld)."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.held = self.most_held = 0
        self.asked: list[str] = []
        self._count = threading.Lock()

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        if any(t.startswith(QUESTION) for t in texts):
            with self._count:
                self.asked.extend(t for t in texts if t.startswith(QUESTION))
                self.held += 1
                self.most_held = max(self.most_held, self.held)
            try:
                assert self.release.wait(20), "the test never released the questions"
            finally:
                with self._count:
                    self.held -= 1
        return super().embed(texts)


def _until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 20
    while not condition():
        assert time.monotonic() < deadline, f"never: {what}"
        time.sleep(0.01)


def _rest_recall(server: LiveServer, token: str, n: int) -> str:
    with server.client(token) as http:
        answer = http.post("/v1/recall", json={"scope": scope_fields(), "limit": 3, "query": f"{QUESTION} {n}"})
    return "ok" if answer.status_code == 200 else answer.text


def _mcp_tool(server: LiveServer, token: str, tool: str, args: dict[str, object]) -> str:
    """An MCP tool called through the mcp package's client, in a session of its own."""

    async def call() -> str:
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30) as http:
            async with Client(streamable_http_client(f"{server.url}/mcp", http_client=http)) as client:
                result = await client.call_tool(tool, args)
        return "error" if result.is_error else "ok"

    return anyio.run(call)


def _mcp_recall(server: LiveServer, token: str, n: int) -> str:
    return _mcp_tool(server, token, "recall", {"query": f"{QUESTION} {n}", "limit": 3})


@pytest.mark.parametrize("lane", [2, RECALLS])  # a lane as wide as the recalls: all run at once
@pytest.mark.parametrize("surface", ["rest", "mcp"])
def test_past_its_lane_a_recall_waits_its_turn_and_a_write_is_served_meanwhile(
    tmp_path: Path, lane: int, surface: str
) -> None:
    settings = Settings(home=tmp_path / "home", embedder="hashing", recall_threads=lane)
    embedder = HeldQuestions()
    server = LiveServer(settings, SQLiteStore(settings.home), embedder)
    server.start()
    recall = {"rest": _rest_recall, "mcp": _mcp_recall}[surface]
    try:
        token = server.key()
        with server.client(token) as http, ThreadPoolExecutor(RECALLS) as pool:
            asked = [pool.submit(recall, server, token, n) for n in range(RECALLS)]
            lane_state = server.app.state.recall_lane
            _until(lambda: lane_state.waiting == RECALLS - lane, "the rest waiting their turn")
            _until(lambda: embedder.held == lane, "the lane's threads each holding a question")
            written = http.post("/v1/episodes", json=episode_body("served while recalls are held"), timeout=5)
            assert written.status_code == 201, written.text  # not queued behind the held recalls
            embedder.release.set()
            answers = [a.result(timeout=30) for a in asked]
        assert answers == ["ok"] * RECALLS
        assert embedder.most_held == lane
    finally:
        embedder.release.set()
        server.stop()


def test_the_tools_that_may_recall_are_those_that_take_the_lane() -> None:
    tools = {op.mcp.tool for op in BY_NAME.values() if op.mcp is not None and recalls(op)}
    assert tools == {"recall", "recent_episodes"}  # recent_episodes recalls when given what it is about
    assert not recalls(BY_NAME["list_facts"])  # control: a listing keeps the MCP package's threads


def test_by_default_the_lane_is_one_thread_per_core_and_a_remote_embedders_recalls_keep_the_pool(
    tmp_path: Path,
) -> None:
    settings = Settings(home=tmp_path / "home", embedder="hashing")
    local = recall_lane(settings, HashingEmbedder())
    assert local is not None and local.places == cores()
    remote = OpenAICompatibleEmbedder("http://127.0.0.1:9", "model")  # never reached: nothing is embedded
    assert recall_lane(settings, remote) is None  # its recalls wait on the network, and their waits overlap
    chosen = recall_lane(settings.model_copy(update={"recall_threads": 7}), remote)  # control: a setting is taken
    assert chosen is not None and chosen.places == 7


def test_the_cores_are_capped_by_a_containers_cpu_quota(tmp_path: Path) -> None:
    cpu_max = tmp_path / "cpu.max"
    affinity = len(os.sched_getaffinity(0))
    assert cores(cpu_max) == affinity  # no file: no quota
    cpu_max.write_text("max 100000\n")
    assert cores(cpu_max) == affinity
    cpu_max.write_text("50000 100000\n")  # half a core still runs one recall
    assert cores(cpu_max) == 1
    cpu_max.write_text(f"{(affinity + 4) * 100000} 100000\n")  # a quota above the affinity does not raise it
    assert cores(cpu_max) == affinity


@contextmanager
def _lane_of_one(tmp_path: Path, in_flight: int | None = None) -> Iterator[tuple[LiveServer, HeldQuestions, str]]:
    """A server whose lane has one place (and at most ``in_flight`` requests at once, if given), its
    embedder holding each question, and an agent key of tenant t1."""
    settings = Settings(home=tmp_path / "home", embedder="hashing", recall_threads=1)
    if in_flight is not None:
        settings = settings.model_copy(update={"max_in_flight": in_flight})
    embedder = HeldQuestions()
    server = LiveServer(settings, SQLiteStore(settings.home), embedder)
    server.start()
    try:
        yield server, embedder, server.key()
    finally:
        embedder.release.set()
        server.stop()


def _scraped(server: LiveServer) -> str:
    """/metrics, read without a key: a keyless request is not one of the requests served at once."""
    with server.client(None) as http:
        return http.get("/metrics").text


def _abandoned(server: LiveServer) -> float:
    scraped = _scraped(server)
    [line] = [line for line in scraped.splitlines() if line.startswith("engram_recalls_abandoned_total ")]
    return float(line.split()[1])


@contextmanager
def _sent(server: LiveServer, token: str, body: dict[str, object]) -> Iterator[None]:
    """A recall sent on a connection of its own, closed when the block ends, before any answer."""
    payload = json.dumps(body).encode()
    host, port = server.url.removeprefix("http://").split(":")
    head = (
        f"POST /v1/recall HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {token}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n\r\n"
    )
    with socket.create_connection((host, int(port)), timeout=10) as connection:
        connection.sendall(head.encode() + payload)
        yield


def test_a_recall_whose_client_hangs_up_while_it_waits_leaves_the_lane_at_once_and_is_not_run(tmp_path: Path) -> None:
    # Two requests at once at most: the first recall and one more.
    with _lane_of_one(tmp_path, in_flight=2) as (server, embedder, token):
        body = {"scope": scope_fields(), "limit": 3}
        lane_state = server.app.state.recall_lane
        abandoned_before = _abandoned(server)
        with server.client(token) as http, ThreadPoolExecutor(3) as pool:
            first = pool.submit(http.post, "/v1/recall", json={**body, "query": f"{QUESTION} held"})
            _until(lambda: embedder.held == 1, "the first recall holding the lane's one thread")
            # A host whose recall budget runs out while it waits: it sends the recall, then hangs up.
            with _sent(server, token, {**body, "query": f"{QUESTION} gone"}):
                _until(lambda: lane_state.waiting == 1, "the second waiting its turn")
                assert http.get("/v1/scopes").status_code == 503  # control: while it waits, it counts as served
            # It leaves the queue when its client does, while the first still holds the lane.
            _until(lambda: lane_state.waiting == 0, "the hung-up recall leaving the queue")
            assert _abandoned(server) == abandoned_before + 1 and embedder.held == 1
            patient = pool.submit(http.post, "/v1/recall", json={**body, "query": f"{QUESTION} patient"})
            _until(lambda: lane_state.waiting == 1, "the third waiting its turn, not refused")
            scraped = _scraped(server)
            assert 'engram_recall_lane{state="running"} 1.0' in scraped
            assert 'engram_recall_lane{state="waiting"} 1.0' in scraped
            embedder.release.set()
            assert first.result(timeout=30).status_code == 200
            assert patient.result(timeout=30).status_code == 200  # control: a client still there is answered
        assert embedder.asked == [f"{QUESTION} held", f"{QUESTION} patient"]  # the abandoned one was never embedded
        assert _abandoned(server) == abandoned_before + 1  # the process's counter: counted once


def test_a_recall_given_its_place_as_its_client_hangs_up_is_not_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race the wait cannot see: the place comes in the same turn of the event loop as the
    hang-up. A wait that watches only the lane stands in for it; the check after the wait catches it."""

    async def lane_only(lane: FairLane, line: Line, request: object) -> bool:
        await lane.acquire(line)
        return True

    monkeypatch.setattr(routes, "_turn_unless_gone", lane_only)
    with _lane_of_one(tmp_path) as (server, embedder, token):
        body = {"scope": scope_fields(), "limit": 3}
        lane_state, connections = server.app.state.recall_lane, server._server.server_state.connections
        abandoned_before = _abandoned(server)
        with server.client(token) as http, ThreadPoolExecutor(2) as pool:
            first = pool.submit(http.post, "/v1/recall", json={**body, "query": f"{QUESTION} held"})
            _until(lambda: embedder.held == 1, "the first recall holding the lane's one thread")
            with _sent(server, token, {**body, "query": f"{QUESTION} gone"}):
                _until(lambda: lane_state.waiting == 1, "the second waiting its turn")
                open_before = len(connections)
            _until(lambda: len(connections) == open_before - 1, "the server seeing the hang-up")
            assert lane_state.waiting == 1  # the stand-in wait did not leave the lane
            patient = pool.submit(http.post, "/v1/recall", json={**body, "query": f"{QUESTION} patient"})
            _until(lambda: lane_state.waiting == 2, "the third waiting behind it")
            embedder.release.set()
            assert first.result(timeout=30).status_code == 200
            assert patient.result(timeout=30).status_code == 200  # control: a client still there is answered
        assert embedder.asked == [f"{QUESTION} held", f"{QUESTION} patient"]  # the hung-up one never embedded
        assert _abandoned(server) == abandoned_before + 1


def test_the_dashboards_recall_playground_takes_its_turn_in_the_lane(tmp_path: Path) -> None:
    with _lane_of_one(tmp_path) as (server, embedder, token):
        lane_state = server.app.state.recall_lane
        with server.client(token) as http, ThreadPoolExecutor(2) as pool:
            agent = pool.submit(_rest_recall, server, token, 0)
            _until(lambda: embedder.held == 1, "an agent's recall holding the lane's one thread")
            played = pool.submit(http.post, "/ui/part/recall", data={"query": f"{QUESTION} playground", "limit": 3})
            _until(lambda: lane_state.waiting == 1, "the playground's recall waiting its turn")
            assert embedder.held == 1  # not run beside the agent's
            embedder.release.set()
            assert agent.result(timeout=30) == "ok"
            page = played.result(timeout=30)
        assert page.status_code == 200 and "text/html" in page.headers["content-type"], page.text
        assert embedder.asked == [f"{QUESTION} 0", f"{QUESTION} playground"] and embedder.most_held == 1


def test_recent_episodes_takes_its_turn_in_the_lane_only_when_it_recalls(tmp_path: Path) -> None:
    with _lane_of_one(tmp_path) as (server, embedder, token):
        lane_state = server.app.state.recall_lane
        with ThreadPoolExecutor(3) as pool:
            agent = pool.submit(_rest_recall, server, token, 0)
            _until(lambda: embedder.held == 1, "an agent's recall holding the lane's one thread")
            listed = pool.submit(_mcp_tool, server, token, "recent_episodes", {"limit": 3})
            assert listed.result(timeout=15) == "ok"  # a listing is answered while the lane is held
            assert embedder.held == 1 and lane_state.waiting == 0
            about = pool.submit(_mcp_tool, server, token, "recent_episodes", {"about": f"{QUESTION} about"})
            _until(lambda: lane_state.waiting == 1, "a recall by topic waiting its turn")
            embedder.release.set()
            assert agent.result(timeout=30) == "ok"
            assert about.result(timeout=30) == "ok"
        assert embedder.most_held == 1


class _Connected:
    """A request whose client stays connected: its next message never comes."""

    async def receive(self) -> dict[str, object]:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


def test_a_place_granted_as_its_request_is_cancelled_goes_back_to_the_lane() -> None:
    async def granted_then_cancelled() -> int:
        lane = FairLane(1)
        assert lane.try_acquire()  # a holder
        waiting = asyncio.get_running_loop().create_task(_turn_unless_gone(lane, ("t", "k1"), _Connected()))  # type: ignore[arg-type]
        while lane.waiting == 0:
            await asyncio.sleep(0)
        lane.release()  # its turn comes ...
        await asyncio.sleep(0)  # ... it takes the place ...
        waiting.cancel()  # ... and the request is cancelled before it could return it (a shutdown)
        with pytest.raises(asyncio.CancelledError):
            await waiting
        with anyio.fail_after(5):  # the place is free again: the next recall gets it
            await lane.acquire(("t", "k2"))
        return lane.running

    assert asyncio.run(granted_then_cancelled()) == 1  # control: only the newcomer holds it


def test_a_key_that_sends_many_recalls_at_once_makes_neither_another_tenant_nor_its_tenants_other_keys_wait(
    tmp_path: Path,
) -> None:
    with _lane_of_one(tmp_path) as (server, embedder, flooding):
        minted, other = server.key(), server.key(tenant="t2")  # another key of the flooding tenant; another tenant
        lane_state = server.app.state.recall_lane
        with ThreadPoolExecutor(6) as pool:
            asked = [pool.submit(_rest_recall, server, flooding, 0)]
            _until(lambda: embedder.held == 1, "the first recall holding the lane")
            for n, token in ((1, flooding), (2, flooding), (3, flooding), (8, minted), (9, other)):
                asked.append(pool.submit(_rest_recall, server, token, n))  # one at a time: their order is known
                _until(partial(lambda k: lane_state.waiting == k, len(asked) - 1), f"recall {n} waiting")
            embedder.release.set()
            assert [a.result(timeout=30) for a in asked] == ["ok"] * 6
        # The tenants take turns, and the flooding tenant's turns go round its keys. One line per key
        # would run 0, 1, 8, 9, 2, 3 (a tenant's minted keys a bigger share); one per tenant 0, 1, 9, 2, 3, 8.
        assert [question.removeprefix(f"{QUESTION} ") for question in embedder.asked] == ["0", "1", "9", "8", "2", "3"]


def _served(asked: list[tuple[str, str, int]], gone: Line) -> list[str]:
    """The order in which a lane of one place serves the recalls ``asked`` ((tenant, key, n) each, in
    that order, while a holder keeps the place), after one more wait in line ``gone`` is cancelled."""

    async def served() -> list[str]:
        lane, order = FairLane(1), []
        assert lane.try_acquire()

        async def recall(tenant: str, key: str, n: int) -> None:
            await lane.acquire((tenant, key))
            order.append(f"{key}{n}")

        async with anyio.create_task_group() as group:
            for tenant, key, n in asked:
                group.start_soon(recall, tenant, key, n)
                await asyncio.sleep(0)
            cancelled = asyncio.get_running_loop().create_task(lane.acquire(gone))  # its client hangs up
            await asyncio.sleep(0)
            assert lane.waiting == len(asked) + 1 and not lane.try_acquire()  # control: it did join its line
            cancelled.cancel()
            await asyncio.sleep(0)
            assert lane.waiting == len(asked)  # a cancelled wait leaves its line
            for _ in asked:
                lane.release()
                await asyncio.sleep(0)
        return order

    return asyncio.run(served())


def test_the_lane_serves_its_keys_in_turn_and_a_cancelled_wait_leaves_its_line() -> None:
    asked = [("a", "a", 1), ("a", "a", 2), ("a", "a", 3), ("b", "b", 1), ("c", "c", 1), ("b", "b", 2)]  # a tenant each
    assert _served(asked, ("a", "a")) == ["a1", "b1", "c1", "a2", "b2", "a3"]


def test_the_lane_serves_tenants_in_turn_and_a_tenants_keys_in_turn_within_its_turns() -> None:
    # Tenant x floods with key x1, then mints x2 and x3; tenant y has one key.
    asked = [("x", "x1", 1), ("x", "x1", 2), ("x", "x1", 3), ("x", "x2", 1), ("x", "x3", 1), ("y", "y1", 1)]
    # y gets every other place, however many keys x has; x's places go round its keys. One line per
    # key would give x three places in four (x1, x2, x3, y1 ...); one per tenant, x1's three first.
    assert _served([*asked, ("y", "y1", 2)], ("x", "x2")) == ["x11", "y11", "x21", "y12", "x31", "x12", "x13"]


@pytest.mark.parametrize("others", [[], [("t", "k2")], [("u", "k3")]])
def test_a_cancelled_wait_that_empties_its_line_or_group_leaves_the_lane_as_it_was(others: list[Line]) -> None:
    async def after_cancel() -> tuple[int, int, bool]:
        lane = FairLane(1)
        assert lane.try_acquire()  # a holder
        waits = [asyncio.get_running_loop().create_task(lane.acquire(line)) for line in [("t", "k1"), *others]]
        await asyncio.sleep(0)
        assert lane.waiting == len(waits)  # control: each joined its line
        waits[0].cancel()  # alone in its line; alone in its group too unless another key of "t" waits
        await asyncio.sleep(0)
        for _ in others:  # the others are served in turn: no empty line or group is left to serve
            lane.release()
            await asyncio.sleep(0)
        await asyncio.gather(*waits[1:])
        lane.release()  # the last place back: nobody waits
        return lane.running, lane.waiting, lane.try_acquire()

    assert asyncio.run(after_cancel()) == (0, 0, True)


def test_a_place_granted_as_its_wait_is_cancelled_goes_to_the_next_in_line() -> None:
    async def passed_on() -> tuple[bool, int, int]:
        lane = FairLane(1)
        assert lane.try_acquire()
        first = asyncio.get_running_loop().create_task(lane.acquire(("a", "a")))
        second = asyncio.get_running_loop().create_task(lane.acquire(("b", "b")))
        await asyncio.sleep(0)
        lane.release()  # granted to the first ...
        first.cancel()  # ... which is cancelled before it runs again
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        return second.done(), lane.running, lane.waiting

    assert asyncio.run(passed_on()) == (True, 1, 0)  # the second holds the one place


def test_past_the_limit_another_key_is_served_up_to_one_and_a_half_times_it_and_another_tenant_up_to_twice(
    tmp_path: Path,
) -> None:
    with _lane_of_one(tmp_path, in_flight=2) as (server, embedder, flooding):
        body = {"scope": scope_fields(), "limit": 3}
        minted = [server.key() for _ in range(2)]  # new keys of the flooding tenant (t1)
        others = [server.key(tenant=f"other{n}") for n in range(2)]
        lane_state = server.app.state.recall_lane

        def scopes(token: str) -> int:
            with server.client(token) as http:
                return http.get("/v1/scopes").status_code

        def recall(token: str, n: int) -> int:
            with server.client(token) as http:
                return http.post("/v1/recall", json={**body, "query": f"{QUESTION} {n}"}).status_code

        with ThreadPoolExecutor(4) as pool:
            held = [pool.submit(recall, flooding, 0)]
            _until(lambda: embedder.held == 1, "the first recall holding the lane")
            held.append(pool.submit(recall, flooding, 1))
            _until(lambda: lane_state.waiting == 1, "the key's second recall waiting: two in flight, the limit")
            assert scopes(flooding) == 503  # control: the key that holds the places is refused
            assert scopes(minted[0]) == 200  # another key of its tenant, nothing in flight: served
            held.append(pool.submit(recall, minted[0], 2))
            _until(lambda: lane_state.waiting == 2, "its recall waiting: three in flight, 1.5 times the limit")
            assert scopes(minted[1]) == 503  # the tenant's next new key: the last places are other tenants'
            assert scopes(others[0]) == 200  # another tenant, nothing in flight: served
            held.append(pool.submit(recall, others[0], 3))
            _until(lambda: lane_state.waiting == 3, "its recall waiting: four in flight")
            assert scopes(others[1]) == 503  # twice the limit: refused, whoever asks
            burst = _held_heads(server, others[1], 6)  # six at once of a tenant with nothing in flight ...
            assert burst == 6  # ... all refused at twice the limit
            embedder.release.set()
            assert [h.result(timeout=30) for h in held] == [200] * 4
        assert scopes(others[1]) == 200 and scopes(minted[1]) == 200  # control: once answered, they are served


def test_at_a_limit_of_one_another_key_of_the_busy_tenant_is_still_served(tmp_path: Path) -> None:
    with _lane_of_one(tmp_path, in_flight=1) as (server, embedder, flooding):
        with server.client(flooding) as http, ThreadPoolExecutor(1) as pool:
            held = pool.submit(http.post, "/v1/recall", json={"scope": scope_fields(), "query": f"{QUESTION} 0"})
            _until(lambda: embedder.held == 1, "one in flight, the limit")
            with server.client(server.key()) as other:  # another key of the flooding tenant (t1)
                assert other.get("/v1/scopes").status_code == 200  # 1.5 times a limit of one, rounded up
            assert http.get("/v1/scopes").status_code == 503  # control: the key that holds the place is refused
            embedder.release.set()
            assert held.result(timeout=30).status_code == 200


@pytest.mark.parametrize("tenant", ["t1", "t2"])  # a new key of the flooding tenant, and another tenant's
def test_a_burst_of_one_new_key_past_the_limit_is_let_in_one_request_only(tmp_path: Path, tenant: str) -> None:
    with _lane_of_one(tmp_path, in_flight=2) as (server, embedder, flooding):
        body = {"scope": scope_fields(), "limit": 3}
        with server.client(flooding) as http, ThreadPoolExecutor(2) as pool:
            held = [pool.submit(http.post, "/v1/recall", json={**body, "query": f"{QUESTION} {n}"}) for n in (0, 1)]
            _until(lambda: embedder.held == 1 and server.app.state.recall_lane.waiting == 1, "two in flight")
            # Ten requests of a key with nothing in flight at once, each checked in a worker thread: one is let in.
            assert _held_heads(server, server.key(tenant=tenant), 10) == 9
            embedder.release.set()
            assert [h.result(timeout=30).status_code for h in held] == [200, 200]


def _held_heads(server: LiveServer, token: str, n: int) -> int:
    """Send ``n`` recall heads at once, each on its own connection with its body never sent; return
    how many were refused at once (an admitted one waits for its body)."""
    host, port = server.url.removeprefix("http://").split(":")
    head = (
        f"POST /v1/recall HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
        "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n"
    ).encode()
    connections = [socket.create_connection((host, int(port)), timeout=3) for _ in range(n)]
    try:
        for connection in connections:
            connection.sendall(head)
        refused = 0
        for connection in connections:
            try:
                refused += connection.recv(64).startswith(b"HTTP/1.1 503")
            except TimeoutError:
                pass  # admitted: the server waits for the body
        return refused
    finally:
        for connection in connections:
            connection.close()
