"""The documentation explorer explains the API (issue 73): every root field and argument has a description,
each root field says who may call it as the authorization table decides, and the descriptions' table
names nothing the schema lacks. A control: without the table, most would be bare (23 were, before it)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from graphql import GraphQLSchema

from auth.operations import MUTATIONS, QUERIES, Access, Refusal, Who
from schema import descriptions
from schema.schema import build_schema

ROOTS = ("Query", "Mutation", "Subscription")


def _roots(schema: GraphQLSchema) -> list[tuple[str, str, Any]]:
    return [(root, name, field) for root in ROOTS for name, field in getattr(schema.get_type(root), "fields", {}).items()]


def test_every_root_field_and_argument_is_described_with_who_may_call_it() -> None:
    schema = build_schema()._schema
    fields = _roots(schema)
    bare = [f"{root}.{name}" for root, name, field in fields if not field.description]
    unsaid = [f"{root}.{name}" for root, name, field in fields if "may call it" not in (field.description or "")]
    arguments = [(f"{root}.{name}({arg})", argument) for root, name, field in fields
                 for arg, argument in field.args.items()]
    bare_arguments = [key for key, argument in arguments if not argument.description]
    assert len(fields) > 150 and len(arguments) > 240
    assert (bare, unsaid, bare_arguments) == ([], [], [])
    assert "Anyone may call it." in schema.get_type("Query").fields["get_shout"].description
    assert "editors" in schema.get_type("Query").fields["adminGetReactions"].description


def test_control_without_the_table_most_are_bare(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(descriptions, "FIELDS", {})
    monkeypatch.setattr(descriptions, "ARGUMENTS", {})
    monkeypatch.setattr(descriptions, "FIELD_ARGUMENTS", {})
    monkeypatch.setattr(descriptions, "who_may_call", lambda _access: "")
    fields = _roots(build_schema()._schema)
    described = [f for _, _, f in fields if f.description]
    assert len(described) < 30, len(described)


def test_the_table_names_only_what_the_schema_has() -> None:
    fields = {f"{root}.{name}": field for root, name, field in _roots(build_schema()._schema)}
    arguments = {f"{key}({arg})" for key, field in fields.items() for arg in field.args}
    names = {arg for field in fields.values() for arg in field.args}
    assert sorted(set(descriptions.FIELDS) - set(fields)) == []
    assert sorted(set(descriptions.FIELD_ARGUMENTS) - arguments) == []
    assert sorted(set(descriptions.ARGUMENTS) - names) == []


@pytest.mark.parametrize("access, says", [
    (QUERIES["get_shout"], "Anyone may call it."),
    (QUERIES["isAdmin"], "Who may call it: anyone signed in (a guest gets an empty answer)."),
    (MUTATIONS["adminDeleteShout"], "Who may call it: its community's editors."),
    (Access(frozenset({Who.OWNERS, Who.EDITORS}), others=Refusal.NOT_FOUND),
     "Who may call it: its owners or its community's editors."),
])
def test_who_may_call_reads_the_authorization_table(access: Access, says: str) -> None:
    assert descriptions.who_may_call(access) == says


async def test_introspection_gives_the_descriptions(client: httpx.AsyncClient) -> None:
    answer = (await client.post("/graphql", json={"query": '{ __type(name: "Query") { fields { name description '
                                                   "args { name description } } } }"})).json()
    fields = {field["name"]: field for field in answer["data"]["__type"]["fields"]}
    assert fields["load_shouts_by"]["description"].startswith("Published shouts by filters")
    assert all(arg["description"] for field in fields.values() for arg in field["args"])
