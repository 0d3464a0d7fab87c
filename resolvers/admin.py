"""Admin-only operations: the settings store."""

from __future__ import annotations

from typing import Any

from auth.env_store import OTHER, SECTIONS, EnvStore
from auth.permissions import Viewer
from resolvers.access import require
from resolvers.deps import Deps
from resolvers.errors import BadInput


async def get_env_variables(deps: Deps, viewer: Viewer | None) -> list[dict[str, Any]]:
    require(viewer, "env:read")
    variables = await EnvStore(deps.state).all()
    sections = []
    for name, description, _ in [*SECTIONS, (*OTHER, ())]:
        members = [v for v in variables if v.section == name]
        if members:
            sections.append({"name": name, "description": description, "variables": [
                {"key": v.key, "value": v.value, "description": None, "type": "string", "isSecret": v.is_secret}
                for v in members]})
    return sections


async def update_env_variables(deps: Deps, viewer: Viewer | None, items: dict[str, str]) -> bool:
    require(viewer, "env:write")
    store = EnvStore(deps.state)
    for name, value in items.items():
        if problem := store.check(name, value):
            raise BadInput(f"{name}: {problem}", field="key")
    if items:
        await store.set_many(items)
    return True
