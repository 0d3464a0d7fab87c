"""Admin operations (not in the Discours contract's public schema; the Discours admin uses them)."""

from __future__ import annotations

import strawberry

from resolvers import admin
from schema.context import Info


@strawberry.type
class EnvVariable:
    key: str
    value: str
    type: str
    description: str | None = None
    isSecret: bool | None = None


@strawberry.type
class EnvSection:
    name: str
    variables: list[EnvVariable]
    description: str | None = None


@strawberry.input
class EnvVariableInput:
    key: str
    value: str
    type: str | None = None


@strawberry.type
class AdminQuery:
    @strawberry.field(name="getEnvVariables")
    async def get_env_variables(self, info: Info) -> list[EnvSection]:
        sections = await admin.get_env_variables(info.context.deps, await info.context.viewer())
        return [EnvSection(name=s["name"], description=s["description"],
                           variables=[EnvVariable(**v) for v in s["variables"]]) for s in sections]


@strawberry.type
class AdminMutation:
    @strawberry.mutation(name="updateEnvVariable")
    async def update_env_variable(self, info: Info, key: str, value: str) -> bool:
        return await admin.update_env_variables(info.context.deps, await info.context.viewer(), {key: value})

    @strawberry.mutation(name="updateEnvVariables")
    async def update_env_variables(self, info: Info, variables: list[EnvVariableInput]) -> bool:
        items = {v.key: v.value for v in variables}
        return await admin.update_env_variables(info.context.deps, await info.context.viewer(), items)
