"""Reading the change feed: audit entries of the feed's actions, in order, after a cursor, each shown
only to a key that may name its scope.

The cursor is the audit log's sequence number. Writers of a tenant are serialised and number their
entries as they commit, so an entry never appears behind a cursor that was already read past. A
page ends at the log's head as read when it started (``head``); ``nextAfter`` says how far the
caller has seen everything it may see, also when the changes it passed over were other scopes'.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from engramdb.contract.events import Scope
from engramdb.core import auth
from engramdb.core.auth import Caller
from engramdb.core.changes.kinds import ACTION_KINDS, actions_of, target_of
from engramdb.core.shared import Area
from engramdb.errors import InvalidInputError
from engramdb.models.changes import Change, ChangePage, ChangeQuery, ChangeScope, parse_kinds
from engramdb.storage.feed.port import ChangeRow
from engramdb.storage.port import TenantStore

PAGE = 500  # audit entries read at a time: a window of this many sequence numbers
MAX_SCAN = 20_000  # entries one request reads at most before it answers (the cursor says where it got)


@dataclass(frozen=True)
class Window:
    """What one reading of the feed found, and how far it read."""

    rows: list[ChangeRow]
    next_after: int
    head: int


def read(
    tenant: TenantStore,
    after: int,
    limit: int,
    kinds: Sequence[str],
    visible: Callable[[ChangeRow], bool] = lambda _: True,
    *,
    scope_key: str | None = None,
) -> Window:
    """Return up to ``limit`` visible changes of these kinds after ``after``, through the head."""
    head, actions = tenant.changes.head(), actions_of(kinds)
    found: list[ChangeRow] = []
    scanned = 0
    while after < head and len(found) < limit and scanned < MAX_SCAN:
        # A window of PAGE sequence numbers a statement: kinds or a scope that few entries match
        # would otherwise have one statement pass over the whole log to fill its page.
        through = min(head, after + PAGE)
        rows = tenant.changes.changes(after, PAGE, actions, through_seq=through, scope_key=scope_key)
        scanned += through - after
        for row in rows:
            after = row.seq
            if visible(row):
                found.append(row)
                if len(found) == limit:
                    break
        if len(found) < limit:
            after = through  # every entry through the window's end was read
    return Window(found, max(after, 0), head)


def own_scope_key(caller: Caller) -> str | None:
    """The digest of the one scope a key is bound to, when it binds all five fields."""
    if any(caller.grant.get(name) is None for name in auth.SCOPE_FIELDS):
        return None
    return auth.scope_key(Scope.model_validate({name: caller.grant[name] for name in auth.SCOPE_FIELDS}))


def visibility(caller: Caller) -> Callable[[ChangeRow], bool]:
    """Whether the caller may see a change: its key may name the change's scope (``auth.may_name``).

    A change whose scope's fields are unknown is shown only to a key bound to no scope field.
    """
    own = own_scope_key(caller)
    bound = any(caller.grant.get(name) is not None for name in auth.SCOPE_FIELDS)

    def visible(row: ChangeRow) -> bool:
        if own is not None:
            return row.scope_key == own
        if row.scope is None:
            return not bound
        return auth.may_name(caller, row.scope)

    return visible


def change_view(row: ChangeRow) -> Change:
    """A change as the feed shows it: ids, kind, time and scope; nothing of the audit's reason."""
    scope = row.scope
    return Change(
        seq=row.seq,
        kind=ACTION_KINDS[row.action],  # type: ignore[arg-type]  # the table's values are ChangeKinds
        target=target_of(row.target_kind),  # type: ignore[arg-type]  # TARGETS' values are ChangeTargets
        id=row.target_id,
        action=row.action,
        at=row.at,
        scope_key=row.scope_key,
        scope=None
        if scope is None
        else ChangeScope(
            agent_id=scope.agent_id,
            profile_id=scope.profile_id,
            privacy_scope=scope.privacy_scope,
            participant_scope_hash=scope.participant_scope_hash,
            sandbox_eligible=scope.sandbox_eligible,
        ),
        actor_role=row.actor_role,
    )


class ChangeOperations(Area):
    """The change feed."""

    def list_changes(self, caller: Caller, query: ChangeQuery) -> ChangePage:
        """What changed in the scopes the key may name, after the cursor, in order."""
        auth.require(caller, "memory.read")
        tenant = self.shared.tenant(caller)
        window = read(
            tenant,
            query.after,
            query.limit,
            parse_kinds(query.kinds),
            visibility(caller),
            scope_key=own_scope_key(caller),
        )
        if query.after > window.head:  # a cursor past the head would skip the changes written up to it
            raise InvalidInputError(f"after is past the feed's head ({window.head})", field="after", head=window.head)
        return ChangePage(
            changes=[change_view(r) for r in window.rows],
            next_after=window.next_after,
            head=window.head,
            more=window.next_after < window.head,
        )
