"""What a request's document decides about its answer, worked out once per document: its cache policy (how long
and for whom it may be kept, schema/engine/cache_control.py), whether it changes state, whether it is answered
as a stream, and whether a rendered root field may answer it whole without executing anything
(schema/engine/rendered.py)."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from graphql import GraphQLError

from app.http.exchange import Exchange
from cache.store import Cache
from schema.engine.cache_control import Policy, PolicyCache
from schema.engine.rendered import RenderedAnswers, WholeAnswer, answer_without_executing
from schema.engine.safety import changes_state
from schema.engine.seam import graphql_schema, stream_protocol
from schema.schema import DiscoursSchema


class Documents:
    """`view`: the Strawberry view, whose Accept header rules say what is a stream; `rendered_ttl`: how long a
    rendered answer is kept (RENDERED_ANSWER_TTL, 0: none is)."""

    def __init__(self, schema: DiscoursSchema, view: Any, *, rendered_ttl: int) -> None:
        self.schema = schema
        self.view = view
        self.rendered_ttl = rendered_ttl
        self.policies = PolicyCache(schema)
        # A document's text always names the same operations: worked out once per document, as it is parsed.
        self._document_changes_state = lru_cache(maxsize=self.policies.size)(self._work_out_changes_state)

    def policy(self, exchange: Exchange) -> Policy:
        answer = exchange.answer
        if answer.policy is None:
            single = exchange.asked.graphql.single
            answer.policy = self.policies.get(single.document or "" if single is not None else "")
        return answer.policy

    def changes_state(self, exchange: Exchange) -> bool:
        """Whether the request runs a mutation (or a state-changing query); True when it cannot tell."""
        single = exchange.asked.graphql.single
        if single is None or not single.document:
            return True
        return self._document_changes_state(single.document, single.operation_name)

    def _work_out_changes_state(self, document: str, operation_name: str | None) -> bool:
        try:
            return changes_state(graphql_schema(self.schema), self.schema.parse(document), operation_name)
        except GraphQLError:
            return True

    def streamed(self, accept: str) -> bool:
        """Whether a request with this Accept header is answered as a stream (server-sent events, multipart),
        as Strawberry reads the header."""
        return stream_protocol(self.view, {"accept": accept}) != "http"

    def rendered_answers(self, exchange: Exchange, cache: Cache) -> RenderedAnswers | None:
        """Whether root fields may be answered from rendered JSON: in a single query whose every field is
        public (schema/engine/rendered.py)."""
        if self.rendered_ttl <= 0 or exchange.asked.graphql.single is None:
            return None
        policy = self.policy(exchange)
        if not policy.cacheable or policy.private:
            return None
        return RenderedAnswers(cache, self.rendered_ttl, missed=exchange.answer.rendered_missed,
                               handed=exchange.answer.handed)

    async def rendered_whole(self, exchange: Exchange, cache: Cache) -> WholeAnswer | None:
        """The whole answer from a rendered root field's, when the request may have it: a single query
        whose every field is public, answered as JSON (not a stream), under the limits."""
        graphql = exchange.asked.graphql
        single, checks = graphql.single, self.schema.checks
        if single is None or not single.document or checks is None or self.streamed(graphql.accept):
            return None
        answers = self.rendered_answers(exchange, cache)
        if answers is None:
            return None
        # A response a write made stale was stored with its rendered field, under the same reads: that one is
        # stale too, and not read.
        key, whole = await answer_without_executing(
            graphql_schema(self.schema), checks, answers, single.document, single.operation_name, single.variables,
            look=not exchange.answer.looked.stale)
        if whole is None:
            exchange.answer.rendered_missed = key  # execution does not read it again
        return whole
