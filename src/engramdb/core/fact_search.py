"""Structured fact search: the current facts under a subject prefix whose text (a JSON object)
meets conditions, a page at a time, newest first or ranked by relevance to a query.

Unlike recall, a search ranks every fact that matches, not the best few of each arm: the
conditions and the prefix choose the facts first (in SQL), then each one is scored, so a page
deep in the ranking is as exact as the first, and a fact whose vector is still pending is ranked
by its words. The score is the fact's relevance (core/relevance.py: the larger of its cosine with
the query and the share of the query's word information its words hold), ties newest first. A
scope field the request leaves open (and the key does not fix) searches every scope's value of
it: a host key can list one agent's facts across its participants.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engramdb import clock
from engramdb.contract.bounds import QUERY_CAP, check_text
from engramdb.contract.events import Scope
from engramdb.core import auth
from engramdb.core.auth import Caller
from engramdb.core.fact_ranking import Matching, Ranking, newest_page, ranked_page
from engramdb.core.recall import lexical_terms
from engramdb.core.shared import Area
from engramdb.core.views import memory_view
from engramdb.models.fact_search import FactPage, FactSearch, FoundFact, SubjectList, SubjectQuery
from engramdb.storage.fact_search.port import SCOPE_COLUMNS, FieldCondition, ScopeMatch

Page = list[tuple[int, float | None]]  # rowids and their scores, in order


class FactSearchOperations(Area):
    """Searching and listing structured facts."""

    def search_facts(self, caller: Caller, body: FactSearch) -> FactPage:
        auth.require(caller, "memory.read")
        scopes = self._scopes(caller, body.scope.named_scope_fields() if body.scope else {})
        where = [FieldCondition(tuple(c.path), c.op, c.value) for c in body.where]
        query = check_text("query", body.query, QUERY_CAP) if body.query is not None else None
        matching = Matching(scopes, body.subject_prefix, where, clock.now_text(), self.shared.embedder.model_id)
        with self.shared.foreground.recalling():
            vector = self.shared.queries.embed([query])[0] if query is not None else None  # before a connection
            with self.shared.tenant(caller).reading() as tenant:
                if query is None or vector is None:
                    page, total = newest_page(tenant, matching, body)
                else:
                    ranking = Ranking(tenant, vector, lexical_terms(query), self.shared.embedder.model_id)
                    page, total = ranked_page(ranking, matching, body)
                records = tenant.records([rowid for rowid, _ in page])
        model = self.shared.embedder.model_id
        facts = [FoundFact(fact=memory_view(records[r], model), score=s) for r, s in page if r in records]
        return FactPage(facts=facts, total=total)

    def list_subjects(self, caller: Caller, query: SubjectQuery) -> SubjectList:
        """The distinct subjects of current facts under a prefix, ascending, a page at a time."""
        auth.require(caller, "memory.read")
        scopes = self._scopes(caller, query.named_scope_fields())
        found = self.shared.tenant(caller).fact_subjects(
            scopes, subject_prefix=query.subject_prefix, after=query.after, now=clock.now_text(), limit=query.limit + 1
        )
        page = found[: query.limit]
        return SubjectList(subjects=page, next_cursor=page[-1] if len(found) > query.limit else None)

    def _scopes(self, caller: Caller, named: Mapping[str, Any]) -> ScopeMatch:
        """The scopes a search covers: the key's grant plus what it names; open fields take any value."""
        fields = auth.merged_scope(caller, self.shared.hashed(caller, named))
        if len(fields) == len(auth.SCOPE_FIELDS):
            return ScopeMatch(scope_key=auth.scope_key(Scope.model_validate(fields)))
        columns = dict(zip(auth.SCOPE_FIELDS, SCOPE_COLUMNS, strict=True))
        return ScopeMatch(columns=tuple((columns[name], value) for name, value in fields.items()))
