"""`discours cache ...`: look at the cache and act on it from a shell.

    stats        keys, memory and TTL spread per key family (SCAN, never KEYS), with today's hit ratio;
                 a table for the state's Redis too (REDIS_STATE_URL)
    invalidate   an entity (author:5); a family (authors: its entities and its lists, as a bulk change of
                 every row of the kind would); every key under a prefix (--prefix author:id:, unlinked);
                 or everything (--all: the global epoch moves)
    precache     warm topics, communities and authors now, with a progress count
    revalidate   process the revalidation queue now, as the 5-minute loop would
    inspect KEY  a key's type, TTL and size; for a cached value its data, its stamp and whether it is valid
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import orjson

from app.cli.progress import Bars
from config.settings import Settings, SettingsError, load_settings

# What `invalidate` takes: an entity's tag by kind, and the families a write can move.
ENTITY_TAGS = ("author", "topic", "community", "shout", "draft")
FAMILIES = ("shouts", "authors", "topics", "communities", "reactions", "collections", "invites", "notifications")


def load_shared_redis_settings(what: str) -> Settings:
    """The settings, refusing a command that would otherwise act on a throwaway in-process Redis (without
    REDIS_URL the server's Redis lives inside its own process) and report a success that changed nothing."""
    settings = load_settings()
    if settings.redis_url is None:
        raise SettingsError(f"REDIS_URL: {what} the server's shared Redis; without REDIS_URL the server keeps "
                            "its Redis inside its own process, where no other command can reach it. Set REDIS_URL "
                            "to the server's Redis (redis://127.0.0.1:6379/0)")
    return settings


def _run(work: Callable[[Any], Awaitable[int]], *, database: bool = False) -> int:
    """Run `work(deps)` with the app's clients (database and Redis), closed afterwards."""
    from app.main import check_services, open_deps

    async def run() -> int:
        settings = load_shared_redis_settings("the cache commands act on")
        async with open_deps(settings) as deps:
            await check_services(settings, deps, database=database)
            return await work(deps)

    return asyncio.run(run())


def cmd_stats(args: argparse.Namespace) -> int:
    from cache.inventory import age, family_stats

    async def work(deps: Any) -> int:
        two = deps.cache.state is not deps.cache.redis  # REDIS_STATE_URL: a table for each server
        for state in (False, True) if two else (False,):
            bars = Bars(not args.quiet)
            families = await family_stats(deps.cache, progress=bars.count("keys scanned"), day=args.day,
                                          state=state)
            bars.close()
            if two:
                print("state Redis (REDIS_STATE_URL)" if state else "cache Redis (REDIS_URL)")
            _table(families, age)
        return 0

    return _run(work)


def _table(families: dict[str, Any], age: Callable[[float], str]) -> None:
    rows = sorted(families.items(), key=lambda item: -item[1].bytes)
    print(f"{'family':<28} {'keys':>8} {'memory':>10} {'no ttl':>7} {'ttl min/median/max':>26} {'hit ratio':>9}")
    for name, entry in rows:
        spread = entry.ttl_spread()
        ttls = " / ".join(age(t) for t in spread) if spread else "-"
        ratio = f"{entry.hit_ratio:.1%}" if entry.hit_ratio is not None else "-"
        print(f"{name:<28} {entry.keys:>8} {_size(entry.bytes):>10} {entry.no_ttl:>7} {ttls:>26} {ratio:>9}")
    total_keys = sum(e.keys for e in families.values())
    print(f"{len(families)} families, {total_keys} keys, {_size(sum(e.bytes for e in families.values()))}; "
          "hit ratio: reads of today (UTC) over all workers")


def _size(n: int) -> str:
    for unit in ("B", "KiB", "MiB"):
        if n < 1024:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return f"{n:.1f} GiB"


def invalidation_tags(args: argparse.Namespace) -> list[str]:
    from cache import keys

    if args.all:
        return [keys.GLOBAL_TAG]
    if args.target is None:
        raise SettingsError("say what to invalidate: an entity (author:5), a family "
                            f"({', '.join(FAMILIES)}), --prefix PREFIX or --all")
    kind, _, entity_id = args.target.partition(":")
    if not entity_id:
        if kind not in FAMILIES:
            raise SettingsError(f"{kind!r} is not a family; one of {', '.join(FAMILIES)}")
        return family_tags(kind)
    if kind not in ENTITY_TAGS or not entity_id.isdigit():
        raise SettingsError(f"{args.target!r}: an entity is kind:id with kind one of {', '.join(ENTITY_TAGS)}")
    tag_of = {"author": keys.tag_author, "topic": keys.tag_topic, "community": keys.tag_community,
              "shout": keys.tag_shout, "draft": keys.tag_draft}[kind]
    tags = [tag_of(int(entity_id))]
    if kind == "author":
        tags.append(keys.tag_account(int(entity_id)))
    if kind == "shout":
        tags.append(keys.tag_shout_reactions(int(entity_id)))
    return tags


def family_tags(family: str) -> list[str]:
    """What rows of every member of a family fixed in SQL make wrong: what a bulk change of the kind's
    table invalidates (triggers/rules.py `BULK`), its entities with its lists."""
    from orm import Author, Collection, Community, Invite, Notification, Reaction, Shout, Topic
    from triggers.rules import BULK

    models = {"shouts": Shout, "authors": Author, "topics": Topic, "communities": Community, "reactions": Reaction,
              "collections": Collection, "invites": Invite, "notifications": Notification}
    return list(BULK[models[family]])


def cmd_invalidate(args: argparse.Namespace) -> int:
    if args.prefix is not None:
        return _run(lambda deps: _unlink_prefix(deps, args.prefix))
    tags = invalidation_tags(args)

    async def work(deps: Any) -> int:
        await deps.cache.invalidate_tags(tags)
        if deps.cache.lost_invalidations:
            raise SettingsError("REDIS_URL: the invalidation did not reach Redis")
        print(f"invalidated {', '.join(tags)}" + (" (every cached value and response)" if args.all else ""))
        return 0

    return _run(work)


async def _unlink_prefix(deps: Any, prefix: str) -> int:
    from cache.invalidation import invalidate_cache_by_prefix

    try:
        removed = await invalidate_cache_by_prefix(deps.cache, prefix)
    except ValueError as exc:
        raise SettingsError(f"--prefix {prefix!r}: {exc}") from None
    print(f"unlinked {removed} keys under {prefix}")
    return 0


def cmd_precache(args: argparse.Namespace) -> int:
    from cache.precache import precache_data

    async def work(deps: Any) -> int:
        bars = Bars(not args.quiet)
        done = await precache_data(deps.cache, deps.db, authors=args.authors, force=True,
                                   progress=bars.count("entities warm"))
        bars.close()
        print("precache done" if done else "another worker is warming the cache now; nothing done")
        return 0

    return _run(work, database=True)


def cmd_revalidate(_args: argparse.Namespace) -> int:
    async def work(deps: Any) -> int:
        handled = await deps.revalidator.process_revalidation()
        if not handled:
            print("nothing to revalidate (or another worker holds lock:revalidation)")
        else:
            print("revalidated " + ", ".join(f"{kind}: {n}" for kind, n in handled.items()))
        return 0

    return _run(work, database=True)


def cmd_inspect(args: argparse.Namespace) -> int:
    from cache.inventory import inspect_key

    async def work(deps: Any) -> int:
        found = await inspect_key(deps.cache, args.key)
        print(orjson.dumps(found, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS).decode())
        return 0 if found["exists"] else 1

    return _run(work)


def add_parser(sub: Any) -> None:
    cache = sub.add_parser("cache", help="look at the cache and act on it", description=__doc__,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = cache.add_subparsers(dest="cache_command", required=True)

    stats = commands.add_parser("stats", help="keys, memory, TTL spread and hit ratio per key family")
    stats.add_argument("--day", help="the UTC day whose hit ratio to show (YYYY-MM-DD; default today)")
    stats.add_argument("--quiet", action="store_true", help="no progress (it shows on a terminal only)")
    stats.set_defaults(func=cmd_stats)

    invalidate = commands.add_parser("invalidate", help="make cached values and responses misses")
    invalidate.add_argument("target", nargs="?", help=f"kind:id ({', '.join(ENTITY_TAGS)}) or a family "
                            f"({', '.join(FAMILIES)})")
    invalidate.add_argument("--all", action="store_true", help="everything (moves the global epoch)")
    invalidate.add_argument("--prefix", help="unlink every cached key under this prefix (SCAN and UNLINK in "
                            "batches of 100; sessions, accounts' secrets, settings and generations refused)")
    invalidate.set_defaults(func=cmd_invalidate)

    precache = commands.add_parser("precache", help="warm topics, communities and authors now")
    precache.add_argument("--authors", type=int, default=500, help="how many authors to warm")
    precache.add_argument("--quiet", action="store_true", help="no progress (it shows on a terminal only)")
    precache.set_defaults(func=cmd_precache)

    revalidate = commands.add_parser("revalidate", help="process the revalidation queue now")
    revalidate.set_defaults(func=cmd_revalidate)

    inspect = commands.add_parser("inspect", help="a key's value, stamp and validity")
    inspect.add_argument("key", help="a Redis key (its family as `cache stats` names it, e.g. author:id:5)")
    inspect.set_defaults(func=cmd_inspect)
