"""Which of the project's modules one request runs, in the order it first enters each: a cold read
(`load_shouts_by`, every cached value a miss, the response cache missing too) and a write (a comment by a
signed-in reader), over the ASGI app with its lifespan's services (triggers, sink, live structures).

    python -m bench.request_path [--database-url URL] [--redis-url URL]

A module counts when a function of its code is called during the request (`sys.setprofile`); modules that
only define what the request uses (a dataclass, a constant) are not counted. Imports are done before: the
requests are the second of their kind.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from types import FrameType
from typing import Any

import httpx

from app.cli.seed import SIZES
from app.main import create_app, open_deps
from bench import services
from bench.read_path import PAGE
from bench.writers import sign_up
from cache import keys
from config.settings import load_settings

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("app", "schema", "resolvers", "auth", "triggers", "cache", "orm", "config", "telemetry", "ambient")
COMMENT = """mutation($s: Int!, $b: String!) { create_reaction(reaction: {kind: COMMENT, shout: $s, body: $b}) {
    error reaction { id } } }"""


def _module_of(filename: str) -> str | None:
    path = Path(filename)
    if not path.is_relative_to(ROOT) or path.suffix != ".py":
        return None
    relative = path.relative_to(ROOT)
    return str(relative) if relative.parts[0] in PACKAGES else None


async def _traced(send: Any) -> list[str]:
    """The project's modules whose functions run while `send()` is awaited, in first-entered order."""
    seen: dict[str, None] = {}

    def profile(frame: FrameType, event: str, _: Any) -> None:
        if event == "call":
            module = _module_of(frame.f_code.co_filename)
            if module is not None:
                seen.setdefault(module)

    sys.setprofile(profile)
    try:
        await send()
    finally:
        sys.setprofile(None)
    return list(seen)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", default=services.named_database())
    parser.add_argument("--redis-url", default=services.named_redis())
    args = parser.parse_args()
    async with services.database(args.database_url, SIZES["test"]) as database_url, \
            services.redis(args.redis_url) as redis_url:
        settings = load_settings(database_url=database_url, redis_url=redis_url, jwt_secret="bench" * 8,
                                 precache_on_start=False)
        async with open_deps(settings) as deps:
            app = create_app(settings, deps=deps)
            async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://b") as http:
                token = await sign_up(http, "request-path")
                headers = {"authorization": f"Bearer {token}"}
                read = {"query": PAGE, "variables": {"o": {"limit": 20, "offset": 20}}}
                write = {"query": COMMENT, "variables": {"s": 1, "b": "a comment, traced"}}

                async def cold() -> None:
                    await deps.cache.invalidate_tags([keys.GLOBAL_TAG])  # every cached value and response a miss

                async def nothing() -> None:
                    pass

                async def cold_read() -> None:
                    answer = await http.post("/graphql", json=read)
                    assert answer.status_code == 200 and "errors" not in answer.json(), answer.text

                async def comment() -> None:
                    answer = await http.post("/graphql", json=write, headers=headers)
                    assert answer.status_code == 200 and not answer.json()["data"]["create_reaction"]["error"]

                for name, before, send in (("a cold load_shouts_by", cold, cold_read), ("a comment", nothing, comment)):
                    await before()
                    await send()  # imports, pools and the first statements' compilation out of the way
                    await before()
                    modules = await _traced(send)
                    packages = sorted({str(Path(m).parent) for m in modules})
                    print(f"## {name}: {len(modules)} modules in {len(packages)} folders\n")
                    print("folders: " + ", ".join(f"`{p}/`" for p in packages) + "\n")
                    print("\n".join(f"{n}. `{m}`" for n, m in enumerate(modules, 1)) + "\n")


if __name__ == "__main__":
    asyncio.run(main())
