"""The stack's limit, for bench/over_http.py: a Starlette route under the same uvicorn that reads the request
and returns stored response bytes from one Redis GET. Nothing a GraphQL server does can be cheaper on this
stack, so a response-cache hit is measured as a fraction of it.

    REDIS_URL=redis://... uvicorn bench.limit_route:app     (POST /graphql?op=NAME answers bench:limit:NAME;
                                                             ?op=NAME&gzip=1 bench:limit:NAME:gzip, gzipped)
"""

from __future__ import annotations

import os

from redis.asyncio import Redis
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

redis = Redis.from_url(os.environ["REDIS_URL"])


async def graphql(request: Request) -> Response:
    await request.body()
    gzipped = request.query_params.get("gzip") == "1"
    body = await redis.get("bench:limit:" + request.query_params.get("op", "") + (":gzip" if gzipped else ""))
    return Response(body or b"{}", media_type="application/json",
                    headers={"content-encoding": "gzip", "vary": "accept-encoding"} if gzipped else None)


async def healthz(_request: Request) -> Response:
    return Response(b'{"status":"ok"}', media_type="application/json")


app = Starlette(routes=[Route("/graphql", graphql, methods=["POST"]), Route("/healthz", healthz)])
