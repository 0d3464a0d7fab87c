"""Cross-origin requests (CORS): the Discours web client runs on its own origin and calls the API with
`credentials: 'include'`, so a listed origin gets its own name back (never `*`, which browsers refuse with
credentials), `Access-Control-Allow-Credentials` and `Vary: Origin`; a preflight gets 204 with the
methods, headers and max-age. Starlette's CORSMiddleware does the work; this module turns the settings'
origins (exact, or with `*` for a part of the host or the port) into its arguments."""

from __future__ import annotations

import re

from starlette.datastructures import Headers
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.responses import Response

from config.settings import Settings

METHODS = ("GET", "POST", "OPTIONS")
# What GraphQL clients send besides the CORS-safelisted headers (Apollo's and urql's included).
HEADERS = ("authorization", "content-type", "accept", "x-requested-with", "apollo-require-preflight",
           "x-apollo-operation-name",
           # and what an EventSource polyfill sends to the event stream (app/routes/connect.py)
           "last-event-id", "cache-control")
# Response headers a page's script may read.
EXPOSED = ("etag", "retry-after")


def origin_regex(patterns: list[str]) -> str | None:
    """One regular expression for the origins with a `*`: a part of the host (letters, digits,
    hyphens, dots) or the port (digits). None when every origin is exact."""
    parts = []
    for pattern in patterns:
        if "*" not in pattern:
            continue
        scheme, rest = pattern.split("://", 1)
        host, _, port = rest.partition(":")
        regex = re.escape(f"{scheme}://") + re.escape(host).replace(r"\*", "[A-Za-z0-9-]+(?:\\.[A-Za-z0-9-]+)*")
        if port:
            regex += ":" + (r"\d{1,5}" if port == "*" else re.escape(port))
        parts.append(regex)
    return "|".join(f"(?:{p})" for p in parts) or None


class Cors(CORSMiddleware):
    def preflight_response(self, request_headers: Headers) -> Response:
        """Starlette answers an accepted preflight 200 "OK"; the CORS spec's and most servers' answer is
        204 with no body (a refused one stays 400, saying what was refused)."""
        response = super().preflight_response(request_headers)
        if response.status_code != 200:
            return response
        headers = {k: v for k, v in response.headers.items() if k not in ("content-length", "content-type")}
        return Response(status_code=204, headers=headers)


def cors(settings: Settings) -> Middleware:
    origins = settings.allowed_origins
    return Middleware(Cors, allow_origins=[o for o in origins if "*" not in o],
                      allow_origin_regex=origin_regex(origins), allow_credentials=True, allow_methods=METHODS,
                      allow_headers=HEADERS, expose_headers=EXPOSED, max_age=settings.cors_max_age)
