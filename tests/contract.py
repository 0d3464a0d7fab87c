"""Loading the API contract (schema files and client operations), copied into tests/contract_files."""

from __future__ import annotations

from pathlib import Path

from graphql import GraphQLSchema, build_schema

CONTRACT = Path(__file__).resolve().parent / "contract_files"


def contract_sdl() -> str:
    return "\n".join(p.read_text() for p in sorted((CONTRACT / "schema").glob("*.graphql")))


def contract_schema() -> GraphQLSchema:
    return build_schema(contract_sdl())


# The August 2025 schema's files work only together, in this order (its README).
NEWEST_FILES = ("enum", "input", "type", "query", "mutation", "admin")


def newest_contract_schema() -> GraphQLSchema:
    """The Discours backend's schema of August 2025 with its admin API (`discours-2025-08/`)."""
    return build_schema("\n".join((CONTRACT / "discours-2025-08" / f"{name}.graphql").read_text()
                                  for name in NEWEST_FILES))


def operations() -> dict[str, str]:
    return {p.stem: p.read_text() for p in sorted((CONTRACT / "operations").glob("*.graphql"))}


def operation_path(name: str) -> Path:
    return CONTRACT / "operations" / f"{name}.graphql"
