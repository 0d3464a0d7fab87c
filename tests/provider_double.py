"""A local double of the sign-in providers, answering as each one's documentation says, served on loopback
by uvicorn (real HTTP, so that Authlib's client and our code speak to it as to the provider):

- Google (OpenID Connect): discovery, a JWKS of its own keys, RS256 ID tokens carrying the nonce, userinfo;
- GitHub: `/login/oauth/access_token` (JSON when asked for it), `/user` (the public address, often null),
  `/user/emails` (every address with `primary` and `verified`);
- Facebook: `/me?fields=...` with the picture as an object;
- Yandex: `/info` under its own `Authorization: OAuth <token>` scheme, `default_email`, an avatar id;
- VK: the address and the user id in the token response, `users.get` (the token in the form);
- X: the secret only by HTTP Basic, `users/me` under `data`, no address.

Every authorization checks the client id and PKCE (S256); a code works once; every request is recorded
(method, URL), so a test can tell that no token travelled in a URL. A test changes `users[provider]`
(who consents next) and `id_token` (how the next ID token is spoiled) before a flow.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import secrets
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode

import uvicorn
from joserfc import jwt
from joserfc.jwk import KeySet, RSAKey
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from config.settings import OAuthProvider
from devtools.services import free_port

CLIENT_ID, CLIENT_SECRET = "discours-client", "discours-secret"
PROVIDERS = ("google", "github", "facebook", "yandex", "vk", "x")


def default_users() -> dict[str, dict[str, Any]]:
    return {
        "google": {"sub": "g-1", "email": "g.user@example.org", "email_verified": True, "name": "G User",
                   "picture": "https://lh3.example/g.png"},
        "github": {"id": 101, "login": "octo", "name": "Octo Cat", "email": None,
                   "avatar_url": "https://avatars.example/octo.png",
                   "emails": [{"email": "octo@private.example", "primary": True, "verified": True,
                               "visibility": "private"}]},
        "facebook": {"id": "fb-7", "name": "Face Book", "email": "fb.user@example.org",
                     "picture": {"data": {"url": "https://fbcdn.example/p.jpg", "is_silhouette": False,
                                          "height": 400, "width": 400}}},
        "yandex": {"id": "ya-9", "login": "ya.user", "default_email": "ya.user@yandex.ru",
                   "real_name": "Ya User", "display_name": "ya", "default_avatar_id": "131/abc-1",
                   "is_avatar_empty": False},
        "vk": {"id": 555, "first_name": "Вера", "last_name": "Кузнецова", "photo_200": "https://vk.example/v.jpg",
               "email": "vera@vk.example"},
        "x": {"id": "x-3", "name": "X User", "username": "xuser", "profile_image_url": "https://pbs.example/x.jpg"},
    }


async def _form(request: Request) -> dict[str, str]:
    return dict(parse_qsl((await request.body()).decode()))


@dataclass
class Double:
    url: str = ""
    users: dict[str, dict[str, Any]] = field(default_factory=default_users)
    # how the next ID token is spoiled: claims to change, or {"key": "other"} to sign with a key not published
    id_token: dict[str, Any] = field(default_factory=dict)
    key: RSAKey = field(default_factory=lambda: RSAKey.generate_key(2048, parameters={"kid": "k1"}))
    other_key: RSAKey = field(default_factory=lambda: RSAKey.generate_key(2048, parameters={"kid": "k1"}))
    requests: list[tuple[str, str]] = field(default_factory=list)
    refuse_next: str | None = None  # the error the next authorization answers (access_denied: the person said no)
    issued: list[str] = field(default_factory=list)  # every token and code handed out
    jwks_fetches: int = 0

    def settings(self) -> dict[str, OAuthProvider]:
        """OAUTH_PROVIDERS for the named providers, each pointed at this double."""
        base = {"client_id": CLIENT_ID, "client_secret": CLIENT_SECRET}
        u = self.url
        return {
            "google": OAuthProvider(**base, discovery_url=f"{u}/google/.well-known/openid-configuration"),
            "github": OAuthProvider(**base, authorize_url=f"{u}/github/login/oauth/authorize",
                                    token_url=f"{u}/github/login/oauth/access_token", userinfo_url=f"{u}/github/user"),
            "facebook": OAuthProvider(**base, authorize_url=f"{u}/facebook/dialog/oauth",
                                      token_url=f"{u}/facebook/oauth/access_token", userinfo_url=f"{u}/facebook/me"),
            "yandex": OAuthProvider(**base, authorize_url=f"{u}/yandex/authorize", token_url=f"{u}/yandex/token",
                                    userinfo_url=f"{u}/yandex/info"),
            "vk": OAuthProvider(**base, authorize_url=f"{u}/vk/authorize", token_url=f"{u}/vk/access_token",
                                userinfo_url=f"{u}/vk/method/users.get"),
            "x": OAuthProvider(**base, authorize_url=f"{u}/x/i/oauth2/authorize", token_url=f"{u}/x/2/oauth2/token",
                               userinfo_url=f"{u}/x/2/users/me"),
        }

    def rotate_key(self) -> None:
        """The provider publishes a new signing key (a new kid) and signs with it from now on."""
        self.key = RSAKey.generate_key(2048, parameters={"kid": secrets.token_hex(4)})

    def _issue(self, prefix: str) -> str:
        value = f"{prefix}-{secrets.token_urlsafe(12)}"
        self.issued.append(value)
        return value

    def app(self) -> Starlette:
        codes: dict[str, dict[str, Any]] = {}
        tokens: dict[str, tuple[str, dict[str, Any]]] = {}  # access token: (provider, user)

        def issuer() -> str:
            return f"{self.url}/google"

        async def record(request: Request) -> None:
            self.requests.append((request.method, str(request.url)))

        async def authorize(request: Request) -> Response:
            await record(request)
            q, provider = request.query_params, request.path_params["provider"]
            if q.get("client_id") != CLIENT_ID or q.get("code_challenge_method") != "S256" \
                    or q.get("response_type") != "code":
                return JSONResponse({"error": "invalid_request"}, status_code=400)
            if self.refuse_next is not None:
                error, self.refuse_next = self.refuse_next, None
                return RedirectResponse(f"{q['redirect_uri']}?{urlencode({'error': error, 'state': q['state']})}",
                                        status_code=302)
            code = self._issue("code")
            codes[code] = {"provider": provider, "challenge": q["code_challenge"], "redirect_uri": q["redirect_uri"],
                           "nonce": q.get("nonce"), "user": dict(self.users[provider])}
            return RedirectResponse(f"{q['redirect_uri']}?{urlencode({'code': code, 'state': q['state']})}",
                                    status_code=302)

        def client_of(request: Request, form: dict[str, str], provider: str) -> tuple[str | None, str | None]:
            header = request.headers.get("authorization", "")
            if header.startswith("Basic "):
                client_id, _, secret = base64.b64decode(header[6:]).decode().partition(":")
                return client_id, secret
            if provider == "x":  # X: a confidential client authenticates by Basic only
                return None, None
            return form.get("client_id"), form.get("client_secret")

        async def token(request: Request) -> Response:
            await record(request)
            provider = request.path_params["provider"]
            form = await _form(request)
            grant = codes.pop(form.get("code", ""), None)  # a code works once
            verifier = form.get("code_verifier", "")
            challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
            if client_of(request, form, provider) != (CLIENT_ID, CLIENT_SECRET):
                return JSONResponse({"error": "invalid_client"}, status_code=401)
            if grant is None or grant["provider"] != provider or challenge != grant["challenge"] \
                    or form.get("redirect_uri") != grant["redirect_uri"]:
                return JSONResponse({"error": "invalid_grant", "error_description": "bad code"}, status_code=400)
            access = self._issue("access")
            user = grant["user"]
            tokens[access] = (provider, user)
            answer: dict[str, Any] = {"access_token": access, "token_type": "bearer", "expires_in": 3600}
            if provider == "google":
                answer["id_token"] = self._id_token(user, grant["nonce"], issuer())
                answer["refresh_token"] = self._issue("refresh")
            elif provider == "vk":  # VK: the address and the user id come with the token
                answer.update(user_id=user["id"], email=user.get("email"))
            if provider == "github" and "json" not in request.headers.get("accept", ""):
                return Response(urlencode(answer), media_type="application/x-www-form-urlencoded")
            return JSONResponse(answer)

        def bearer(request: Request, scheme: str = "Bearer") -> tuple[str, dict[str, Any]] | None:
            header = request.headers.get("authorization", "")
            return tokens.get(header.removeprefix(f"{scheme} ")) if header.startswith(f"{scheme} ") else None

        def unauthorized() -> Response:
            return JSONResponse({"error": "invalid_token"}, status_code=401)

        async def discovery(request: Request) -> Response:
            await record(request)
            u = f"{self.url}/google"
            return JSONResponse({"issuer": issuer(), "authorization_endpoint": f"{u}/authorize",
                                 "token_endpoint": f"{u}/token", "userinfo_endpoint": f"{u}/userinfo",
                                 "jwks_uri": f"{u}/jwks", "id_token_signing_alg_values_supported": ["RS256"],
                                 "response_types_supported": ["code"], "subject_types_supported": ["public"]})

        async def jwks(request: Request) -> Response:
            await record(request)
            self.jwks_fetches += 1
            return JSONResponse(KeySet([self.key]).as_dict(private=False))

        async def google_userinfo(request: Request) -> Response:
            await record(request)
            found = bearer(request)
            return JSONResponse(found[1]) if found else unauthorized()

        async def github_user(request: Request) -> Response:
            await record(request)
            found = bearer(request)
            if not found:
                return unauthorized()
            return JSONResponse({k: v for k, v in found[1].items() if k != "emails"})

        async def github_emails(request: Request) -> Response:
            await record(request)
            found = bearer(request)
            return JSONResponse(found[1].get("emails", [])) if found else unauthorized()

        async def facebook_me(request: Request) -> Response:
            await record(request)
            found = bearer(request)
            if not found:
                return unauthorized()
            wanted = request.query_params.get("fields", "id,name")
            user = found[1]
            return JSONResponse({k: v for k, v in user.items() if any(f.startswith(k) for f in wanted.split(","))})

        async def yandex_info(request: Request) -> Response:
            await record(request)
            found = bearer(request, "OAuth")
            return JSONResponse(found[1]) if found else unauthorized()

        async def vk_users_get(request: Request) -> Response:
            await record(request)
            form = await _form(request)
            found = tokens.get(form.get("access_token", ""))
            if not found or not form.get("v"):
                return JSONResponse({"error": {"error_code": 5, "error_msg": "User authorization failed"}})
            user = found[1]
            return JSONResponse({"response": [{k: user[k] for k in ("id", "first_name", "last_name", "photo_200")}]})

        async def x_me(request: Request) -> Response:
            await record(request)
            found = bearer(request)
            return JSONResponse({"data": found[1]}) if found else unauthorized()

        return Starlette(routes=[
            Route("/google/.well-known/openid-configuration", discovery),
            Route("/google/jwks", jwks),
            Route("/google/userinfo", google_userinfo),
            Route("/github/user", github_user),
            Route("/github/user/emails", github_emails),
            Route("/facebook/me", facebook_me),
            Route("/yandex/info", yandex_info),
            Route("/vk/method/users.get", vk_users_get, methods=["POST"]),
            Route("/x/2/users/me", x_me),
            Route("/{provider}/authorize", authorize),
            Route("/{provider}/login/oauth/authorize", authorize),
            Route("/{provider}/dialog/oauth", authorize),
            Route("/{provider}/i/oauth2/authorize", authorize),
            Route("/{provider}/token", token, methods=["POST"]),
            Route("/{provider}/login/oauth/access_token", token, methods=["POST"]),
            Route("/{provider}/oauth/access_token", token, methods=["POST"]),
            Route("/{provider}/access_token", token, methods=["POST"]),
            Route("/{provider}/2/oauth2/token", token, methods=["POST"]),
        ])

    def _id_token(self, user: dict[str, Any], nonce: str | None, issuer: str) -> str:
        now = int(time.time())
        claims = {"iss": issuer, "aud": CLIENT_ID, "sub": user["sub"], "iat": now, "exp": now + 3600,
                  "nonce": nonce, "email": user.get("email"), "email_verified": user.get("email_verified"),
                  "name": user.get("name"), "picture": user.get("picture")}
        spoil = dict(self.id_token)
        key = self.other_key if spoil.pop("key", None) == "other" else self.key
        claims.update(spoil)
        value = jwt.encode({"alg": "RS256", "kid": key.kid}, {k: v for k, v in claims.items() if v is not None}, key)
        self.issued.append(value)
        return value


@asynccontextmanager
async def running_double() -> AsyncIterator[Double]:
    double = Double()
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(double.app(), host="127.0.0.1", port=port, log_level="warning"))
    task = asyncio.create_task(server.serve())
    while not server.started:  # noqa: ASYNC110 - uvicorn offers a flag, not an event
        await asyncio.sleep(0.01)
    double.url = f"http://127.0.0.1:{port}"
    try:
        yield double
    finally:
        server.should_exit = True
        await task
