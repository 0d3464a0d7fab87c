"""Which operations change state, so they are never run over GET: a link on another site must not sign a
user out or write anything with the user's cookie. Mutations do; so does any query field declared with
`metadata=CHANGES_STATE` (the contract's `Query.logout`)."""

from __future__ import annotations

from graphql import (
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLField,
    GraphQLSchema,
    InlineFragmentNode,
    OperationType,
    SelectionSetNode,
    get_operation_ast,
)

from schema.engine.seam import field_definition

CHANGES_STATE = {"changes_state": True}


def changes_state(schema: GraphQLSchema, document: DocumentNode, operation_name: str | None) -> bool:
    operation = get_operation_ast(document, operation_name)
    if operation is None:
        return False  # no single operation to run: execution refuses it
    if operation.operation is OperationType.MUTATION:
        return True
    root = schema.get_root_type(operation.operation)
    if root is None:
        return False
    fragments = {d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)}
    return any(_declared(root.fields.get(name)) for name in _root_fields(operation.selection_set, fragments))


def _declared(field: GraphQLField | None) -> bool:
    definition = field_definition(field)
    return bool(definition is not None and definition.metadata.get("changes_state"))


def _root_fields(selection_set: SelectionSetNode, fragments: dict[str, FragmentDefinitionNode],
                 seen: frozenset[str] = frozenset()) -> set[str]:
    names: set[str] = set()
    for node in selection_set.selections:
        if isinstance(node, FieldNode):
            names.add(node.name.value)
        elif isinstance(node, InlineFragmentNode):
            names |= _root_fields(node.selection_set, fragments, seen)
        elif isinstance(node, FragmentSpreadNode) and node.name.value not in seen and node.name.value in fragments:
            names |= _root_fields(fragments[node.name.value].selection_set, fragments, seen | {node.name.value})
    return names
