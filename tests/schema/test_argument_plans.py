"""A field's arguments converted by plan (schema/engine/seam.py `PlannedArguments`) are what Strawberry's own
conversion gives, for every argument of the schema: each input given whole (every field, nested inputs and
lists included), given with only what it requires, and given as null where it may be."""

from __future__ import annotations

from typing import Any

import pytest
from graphql import (
    GraphQLInputType,
    coerce_input_value,
    is_enum_type,
    is_input_object_type,
    is_list_type,
    is_non_null_type,
    is_object_type,
)

from schema.engine.seam import (
    STRAWBERRYS_CONVERSION,
    PlannedArguments,
    conversion_of,
    field_definition,
    graphql_schema,
)
from schema.schema import build_schema

SCHEMA = build_schema()
GRAPHQL = graphql_schema(SCHEMA)
SAMPLES: dict[str, Any] = {"Int": 7, "Float": 1.5, "String": "text", "Boolean": True, "ID": "3",
                           "JSON": {"a": [1, "b"]}}
NESTED_MOST = 3  # inputs nested in inputs are given whole to this depth (an input may hold itself)


def _external(type_: GraphQLInputType, whole: bool, depth: int = 0) -> Any:
    """A value of `type_` as a client would send it: `whole` gives every field of its inputs."""
    if is_non_null_type(type_):
        return _external(type_.of_type, whole, depth)  # type: ignore[attr-defined]
    if is_list_type(type_):
        return [_external(type_.of_type, whole, depth)]  # type: ignore[attr-defined]
    if is_enum_type(type_):
        return next(iter(type_.values))  # type: ignore[attr-defined]
    if is_input_object_type(type_):
        fields = type_.fields  # type: ignore[attr-defined]
        return {name: _external(field.type, whole, depth + 1) for name, field in fields.items()
                if is_non_null_type(field.type) or (whole and depth < NESTED_MOST)}
    return SAMPLES[type_.name]  # type: ignore[attr-defined]  # a scalar with no sample fails here: add one


def _cases() -> list[tuple[str, str, dict[str, Any]]]:
    """(type.field, case, the arguments as graphql-core hands them to a resolver) for every field taking some."""
    cases = []
    for type_name, type_ in GRAPHQL.type_map.items():
        if not is_object_type(type_) or type_name.startswith("__"):
            continue
        for field_name, field in type_.fields.items():  # type: ignore[attr-defined]
            if not field.args:
                continue
            where = f"{type_name}.{field_name}"
            for case, whole in (("whole", True), ("required", False)):
                cases.append((where, case, {name: coerce_input_value(_external(argument.type, whole), argument.type)
                                            for name, argument in field.args.items()
                                            if whole or is_non_null_type(argument.type)}))
            cases.append((where, "nulls", {name: None for name, argument in field.args.items()
                                           if not is_non_null_type(argument.type)}))
    return cases


CASES = _cases()


def _field(where: str) -> Any:
    """The graphql-core field named `type.field`."""
    type_name, field_name = where.split(".")
    return GRAPHQL.type_map[type_name].fields[field_name]  # type: ignore[union-attr]


def _arguments(where: str) -> list[Any]:
    """The Strawberry arguments of the field named `type.field`."""
    definition = field_definition(_field(where))
    assert definition is not None
    return definition.arguments


def _converted_both_ways(where: str, value: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    registry, config = conversion_of(SCHEMA)
    return (PlannedArguments()(value, _arguments(where), registry, config),
            STRAWBERRYS_CONVERSION(value, _arguments(where), registry, config))


def test_the_cases_reach_every_input_and_every_argument_is_planned() -> None:
    """The comparison below is of plans, not of Strawberry with itself (its control): no argument of this
    schema is left to Strawberry, and the whole cases give a value to every input type an argument names."""
    registry, config = conversion_of(SCHEMA)
    fields = {where for where, _, _ in CASES}
    for where in fields:
        plan = PlannedArguments._plan(_arguments(where), registry, config)
        assert all(convert is not None for _, _, convert, _ in plan), where
    given: set[str] = set()

    def reached(type_: Any, value: Any) -> None:
        type_ = type_.of_type if is_non_null_type(type_) else type_
        if is_list_type(type_):
            for item in value or ():
                reached(type_.of_type, item)
        elif is_input_object_type(type_) and value is not None:
            given.add(type_.name)
            for name, inner in value.items():
                reached(type_.fields[name].type, inner)

    for where, _, value in CASES:
        for name, inner in value.items():
            reached(_field(where).args[name].type, inner)
    named: set[str] = set()  # the input types some argument names, nested ones included

    def inputs_in(type_: Any) -> None:
        while hasattr(type_, "of_type"):
            type_ = type_.of_type
        if is_input_object_type(type_) and type_.name not in named:
            named.add(type_.name)
            for field in type_.fields.values():
                inputs_in(field.type)

    for where in fields:  # every field that takes arguments has its cases
        for argument in _field(where).args.values():
            inputs_in(argument.type)
    assert len(named) > 15 and given == named, sorted(named - given)


@pytest.mark.parametrize(("where", "case", "value"), CASES, ids=[f"{w}-{c}" for w, c, _ in CASES])
def test_a_planned_conversion_is_strawberrys(where: str, case: str, value: dict[str, Any]) -> None:
    planned, strawberrys = _converted_both_ways(where, value)
    assert planned == strawberrys
    assert [type(item) for item in planned.values()] == [type(item) for item in strawberrys.values()]


def test_a_list_argument_is_copied_and_a_changed_input_is_told_apart() -> None:
    """The list graphql-core gives (a default it shares between requests) is never handed on as it is; and
    the comparison above sees a difference deep in an input (its control)."""
    shared = [1, 2]
    planned, _ = _converted_both_ways("Query.get_my_rates_shouts", {"shouts": shared})
    assert planned == {"shouts": shared} and planned["shouts"] is not shared
    whole = next(value for where, case, value in CASES if (where, case) == ("Query.load_shouts_by", "whole"))
    changed = {**whole, "options": {**whole["options"], "filters": {**whole["options"]["filters"], "featured": False}}}
    assert whole["options"]["filters"]["featured"] is True
    assert _converted_both_ways("Query.load_shouts_by", changed)[0] != _converted_both_ways("Query.load_shouts_by",
                                                                                           whole)[1]
