"""The project's schema against each contract's (the mid-2025 schema files, and the Discours backend's of
August 2025 with its admin API): every query and mutation with the same arguments and a compatible type,
and every type, input and enum with its fields."""

from __future__ import annotations

import pytest
from graphql import (
    GraphQLEnumType,
    GraphQLInputObjectType,
    GraphQLList,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLSchema,
)

from schema.engine.seam import graphql_schema
from schema.schema import build_schema
from tests.contract import contract_schema, newest_contract_schema

# Operations and types of a contract not served yet. These lists only shrink.
PENDING_QUERY_FIELDS: set[str] = set()
PENDING_MUTATIONS: set[str] = set()
PENDING_TYPES: set[str] = set()
# Where a contract and the client that sends the field disagree on its type, the client wins (contract
# README): `LoadNotificationsQuery` selects `NotificationGroup.reactions` with no sub-selection, so it is a
# scalar list; Discours' own panel reads a Boolean from `updateEnvVariable(s)`, which its 2025-08 schema
# declares an OperationResult.
CLIENT_WINS = {("NotificationGroup", "reactions"): "[Int]", ("Mutation", "updateEnvVariable"): "Boolean!",
               ("Mutation", "updateEnvVariables"): "Boolean!"}


def _shape(type_: object) -> str:
    """`[Author!]!` style rendering."""
    if isinstance(type_, GraphQLNonNull):
        return _shape(type_.of_type) + "!"
    if isinstance(type_, GraphQLList):
        return "[" + _shape(type_.of_type) + "]"
    return type_.name  # type: ignore[attr-defined]


def _input_compatible(ours: object, theirs: object) -> bool:
    """An argument or input field may be looser than the contract (optional where it is required, so that
    what the contract's clients send is still valid), never stricter."""
    if isinstance(ours, GraphQLNonNull):
        return isinstance(theirs, GraphQLNonNull) and _input_compatible(ours.of_type, theirs.of_type)
    if isinstance(theirs, GraphQLNonNull):
        theirs = theirs.of_type
    if isinstance(ours, GraphQLList):
        return isinstance(theirs, GraphQLList) and _input_compatible(ours.of_type, theirs.of_type)
    return not isinstance(theirs, GraphQLList) and ours.name == theirs.name  # type: ignore[attr-defined]


def _output_compatible(ours: object, theirs: object) -> bool:
    """An output type may be stricter than the contract (non-null where it allows null), never looser."""
    if isinstance(theirs, GraphQLNonNull):
        return isinstance(ours, GraphQLNonNull) and _output_compatible(ours.of_type, theirs.of_type)
    if isinstance(ours, GraphQLNonNull):
        ours = ours.of_type
    if isinstance(theirs, GraphQLList):
        return isinstance(ours, GraphQLList) and _output_compatible(ours.of_type, theirs.of_type)
    return not isinstance(ours, GraphQLList) and ours.name == theirs.name  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def ours() -> GraphQLSchema:
    return graphql_schema(build_schema())


@pytest.fixture(scope="module", params=["mid-2025", "2025-08"])
def theirs(request: pytest.FixtureRequest) -> GraphQLSchema:
    return contract_schema() if request.param == "mid-2025" else newest_contract_schema()


def _root_problems(kind: str, ours: GraphQLObjectType | None, theirs: GraphQLObjectType | None,
                   pending: set[str]) -> list[str]:
    assert ours is not None and theirs is not None
    problems = []
    for name, field in theirs.fields.items():
        if name in pending:
            continue
        mine = ours.fields.get(name)
        if mine is None:
            problems.append(f"missing {kind}.{name}")
            continue
        if not _output_compatible(mine.type, field.type) and CLIENT_WINS.get((kind, name)) != _shape(mine.type):
            problems.append(f"{kind}.{name}: {_shape(mine.type)} vs contract {_shape(field.type)}")
        for arg_name, arg in field.args.items():
            my_arg = mine.args.get(arg_name)
            if my_arg is None or not _input_compatible(my_arg.type, arg.type):
                problems.append(f"{kind}.{name}({arg_name}): {my_arg and _shape(my_arg.type)} vs {_shape(arg.type)}")
        extra_required = [a for a, v in mine.args.items() if a not in field.args and isinstance(v.type, GraphQLNonNull)]
        if extra_required:
            problems.append(f"{kind}.{name} requires extra arguments {extra_required}")
    return problems


def test_every_query_field_with_same_arguments(ours: GraphQLSchema, theirs: GraphQLSchema) -> None:
    problems = _root_problems("Query", ours.query_type, theirs.query_type, PENDING_QUERY_FIELDS)
    assert not problems, "\n".join(problems)


def test_every_mutation_with_same_arguments(ours: GraphQLSchema, theirs: GraphQLSchema) -> None:
    problems = _root_problems("Mutation", ours.mutation_type, theirs.mutation_type, PENDING_MUTATIONS)
    assert not problems, "\n".join(problems)


def test_every_type_input_and_enum_with_its_fields(ours: GraphQLSchema, theirs: GraphQLSchema) -> None:
    problems = []
    for name, their_type in theirs.type_map.items():
        if name.startswith("__") or name in ("Query", "Mutation") or name in PENDING_TYPES:
            continue
        if name in ("String", "Int", "Float", "Boolean", "ID"):
            continue
        my_type = ours.type_map.get(name)
        if my_type is None:
            problems.append(f"missing type {name}")
            continue
        if isinstance(their_type, GraphQLEnumType):
            assert isinstance(my_type, GraphQLEnumType), name
            missing = set(their_type.values) - set(my_type.values)
            if missing:
                problems.append(f"enum {name} lacks {sorted(missing)}")
        elif isinstance(their_type, GraphQLInputObjectType):
            assert isinstance(my_type, GraphQLInputObjectType), name
            for field_name, field in their_type.fields.items():
                mine = my_type.fields.get(field_name)
                if mine is None or not _input_compatible(mine.type, field.type):
                    problems.append(f"input {name}.{field_name}: {mine and _shape(mine.type)} vs {_shape(field.type)}")
        elif isinstance(their_type, GraphQLObjectType):
            assert isinstance(my_type, GraphQLObjectType), name
            for field_name, field in their_type.fields.items():
                mine = my_type.fields.get(field_name)
                if mine is not None and CLIENT_WINS.get((name, field_name)) == _shape(mine.type):
                    continue
                if mine is None or not _output_compatible(mine.type, field.type):
                    problems.append(f"type {name}.{field_name}: {mine and _shape(mine.type)} vs {_shape(field.type)}")
    assert not problems, "\n".join(problems)


def test_field_names_stay_snake_case(ours: GraphQLSchema) -> None:
    assert ours.query_type is not None
    assert "load_shouts_by" in ours.query_type.fields
    assert "comments_count" in ours.type_map["Stat"].fields  # type: ignore[union-attr]
