"""Cursors hold no row number. A row number counts every scope's writes (on PostgreSQL every tenant's
of a schema), so two cursors of one key said how much another scope or tenant wrote between them (a
review helper, session 44). The episodes' and the relationships' cursors seal theirs
(core/sealed.py); the server still reads every page from them, on both backends."""

from __future__ import annotations

import base64
import random

from hypothesis import given
from hypothesis import strategies as st

from engramdb.contract.events import Scope
from engramdb.core import auth
from engramdb.core.auth import Caller
from engramdb.core.sealed import Sealer
from engramdb.storage.knowledge.port import NodeRef
from tests.conftest import LiveServer
from tests.factories import episode_body, scope_fields

SEALER = Sealer("a tenant's salt")
MINE = auth.scope_key(Scope.model_validate(scope_fields()))  # the scope of server.key()


@given(st.integers(0, 2**63 - 1))
def test_a_sealed_number_unseals_to_itself_and_to_nothing_else(number: int) -> None:
    sealed = SEALER.seal(number)
    assert len(sealed) == 16 and SEALER.unseal(sealed) == number


def test_a_tenants_key_seals_its_own_way_and_every_text_unseals_to_at_most_one_number() -> None:
    rng = random.Random(44)
    numbers = [rng.randrange(2**63) for _ in range(500)]
    other = Sealer("another tenant's salt")
    assert sum(SEALER.seal(n) == other.seal(n) for n in numbers) == 0  # keyed: the tenants' cursors differ
    assert len({SEALER.seal(n) for n in range(1000)}) == 1000  # consecutive rows: no two alike
    assert [SEALER.seal(n)[:8] for n in range(3)] != [SEALER.seal(0)[:8]] * 3  # nor in order
    for text in (f"{rng.randrange(2**64):016x}" for _ in range(500)):
        number = SEALER.unseal(text)
        assert number is None or SEALER.seal(number) == text
    for text in ("", "0" * 15, "0" * 17, "g" * 16, "ABCDEF0123456789", "٠" * 16):
        assert SEALER.unseal(text) is None, text


def _tail(cursor: str, *, encoded: bool) -> str:
    """The part of a cursor that breaks a tie of times."""
    text = base64.urlsafe_b64decode(cursor).decode() if encoded else cursor
    return text.rsplit("|", 1)[1]


def test_episode_and_relationship_cursors_seal_their_rows_and_still_page(server: LiveServer) -> None:
    key = server.key()
    service = server.app.state.service
    sealer = service.shared.sealer(Caller(tenant="t1", key_id="test", role="admin"))
    tenant = server.store.tenant("t1")
    with server.client(key) as http:
        for turn in range(3):
            assert http.post("/v1/episodes", json=episode_body(f"turn {turn}", turn=turn)).status_code == 201
        hub = http.post("/v1/records", json={"label": "HUB", "data": {"TASK": [{"n": 1}, {"n": 2}, {"n": 3}]}})
        hub_id = hub.json()["records"][0]["id"]
        episodes = http.get("/v1/episodes", params={"limit": 1}).json()
        links = http.get("/v1/relationships", params={"id": hub_id, "limit": 1}).json()
        # The positive control: each cursor leads to the rest, page by page.
        assert len(http.get("/v1/episodes", params={"cursor": episodes["nextCursor"]}).json()["episodes"]) == 2
        rest = http.get("/v1/relationships", params={"id": hub_id, "cursor": links["nextCursor"]}).json()
        assert len(rest["relationships"]) == 2
    everything = tenant.list_episodes(MINE, session_id=None, after=None, before=None, below=None, limit=10)
    newest = max(everything, key=lambda r: (r.observed_at, r.rowid))
    hub_row = tenant.node_rowid(MINE, "RECORD", hub_id)
    assert hub_row is not None
    [first_edge] = tenant.node_edges(MINE, NodeRef("RECORD", hub_row), type=None, direction="both", after=None, limit=1)
    for cursor, rowid, encoded in (
        (episodes["nextCursor"], newest.rowid, True),
        (links["nextCursor"], first_edge.rowid, False),
    ):
        tail = _tail(cursor, encoded=encoded)
        assert sealer.unseal(tail) == rowid  # the server reads its row back ...
        assert tail != str(rowid) and int(tail, 16) != rowid  # ... a client does not, in decimal or in hex
