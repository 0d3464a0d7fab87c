"""Sign-in providers, each turning its answers into one `Identity`: who (the provider's subject), the
address if the provider gives one, whether the provider vouches for it, a name and a picture URL.

Only an address the provider says it has confirmed is vouched for: Google's and any OpenID provider's
`email_verified`, GitHub's verified primary address (read from `/user/emails`, so a private address counts
too). Facebook, Yandex and VK give an address with no such statement, X gives none at all (nor does
Telegram, auth/telegram.py): such identities sign in by their subject alone and never link an account by
its address (auth/linking.py decides).

A provider named here needs only a client id and secret in `OAUTH_PROVIDERS`; every other field there
overrides the default below (tests point them at a local double). Any other id is a generic provider:
OAuth 2 with a userinfo endpoint, or OpenID Connect with discovery.
"""

from __future__ import annotations

import warnings
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import authlib.deprecate  # noqa: F401 - installs Authlib's "always show" warning filter, which ours must follow
import httpx

from config.settings import OAuthProvider

# Authlib 1.9 warns, at import, that it would rather run on the httpx2 fork than on httpx (the stack's);
# it works on httpx until 2.0 (pyproject keeps authlib <2). Every command and server start would print
# the warning: it is silenced for that import only.
with warnings.catch_warnings():
    warnings.filterwarnings("ignore", message="The httpx module is deprecated")
    from authlib.integrations.httpx_client import AsyncOAuth2Client as AsyncOAuth2Client  # for auth/oauth.py

TELEGRAM = "telegram"


class OAuthError(Exception):
    """The sign-in cannot go on; the message is safe to show (it never holds a token or a code), and `code`
    names the reason for a web client, which shows its own words for it (`/oauth?error=<code>`)."""

    def __init__(self, message: str, code: str = "oauth_failed", started: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.started = started  # what the spent state recorded, when it was known (auth/oauth.py `Started`)


@dataclass(frozen=True, slots=True)
class Identity:
    provider: str
    subject: str
    email: str | None
    email_verified: bool  # the provider vouches for the address: it may then link the account that has it
    name: str | None
    picture: str | None
    access_token: str | None = None
    refresh_token: str | None = None


@dataclass(frozen=True, slots=True)
class Answers:
    """What a reader has to go on: the client (carrying the access token), the token response, and the ID
    token's claims once validated (OpenID providers)."""

    client: AsyncOAuth2Client
    token: dict[str, Any]
    claims: dict[str, Any] | None


Reader = Callable[["Endpoints", Answers], Awaitable[Identity]]


@dataclass(frozen=True, slots=True)
class Endpoints:
    """A provider as configured: its profile's defaults under what the settings override."""

    provider: str
    name: str
    client_id: str
    client_secret: str
    authorize_url: str
    token_url: str
    userinfo_url: str
    discovery_url: str
    scope: str
    read: Reader
    token_auth: str = "client_secret_post"  # how the token request carries the secret
    emails_verified: bool = False

    def identity(self, subject: Any, email: Any, vouched: bool, name: Any, picture: Any,
                 token: dict[str, Any]) -> Identity:
        if subject in (None, ""):
            raise OAuthError(f"{self.name} gave no user id")
        address = str(email).strip().lower() if email else None
        return Identity(provider=self.provider, subject=str(subject), email=address or None,
                        email_verified=bool(address) and vouched, name=str(name).strip()[:255] if name else None,
                        picture=str(picture) if picture else None, access_token=token.get("access_token"),
                        refresh_token=token.get("refresh_token"))


async def _json(response: httpx.Response, endpoints: Endpoints) -> Any:
    if response.status_code != 200:
        raise OAuthError(f"{endpoints.name} refused the user information")
    return response.json()


async def _generic(endpoints: Endpoints, answers: Answers) -> Identity:
    """OpenID claims (the ID token's, completed by userinfo when there is one) or OAuth userinfo."""
    user = dict(answers.claims or {})
    if endpoints.userinfo_url:
        info = await _json(await answers.client.get(endpoints.userinfo_url), endpoints)
        if answers.claims and str(info.get("sub")) != str(answers.claims.get("sub")):
            raise OAuthError(f"{endpoints.name} answered for another user")  # OIDC Core 5.3.2
        user = {**info, **user}
    vouched = endpoints.emails_verified or user.get("email_verified") in (True, "true")
    return endpoints.identity(user.get("sub") or user.get("id"), user.get("email"), vouched, user.get("name"),
                              user.get("picture") or user.get("avatar_url"), answers.token)


async def _github(endpoints: Endpoints, answers: Answers) -> Identity:
    """`/user`, then `/user/emails` (the `user:email` scope): the primary address, vouched for when
    GitHub has verified it; a private address is only there."""
    headers = {"accept": "application/vnd.github+json"}
    user = await _json(await answers.client.get(endpoints.userinfo_url, headers=headers), endpoints)
    emails = await answers.client.get(endpoints.userinfo_url.rstrip("/") + "/emails", headers=headers)
    primary = next((e for e in (await _json(emails, endpoints) if emails.status_code == 200 else [])
                    if isinstance(e, dict) and e.get("primary")), None)
    email, vouched = (primary["email"], primary.get("verified") is True) if primary else (user.get("email"), False)
    return endpoints.identity(user.get("id"), email, vouched, user.get("name") or user.get("login"),
                              user.get("avatar_url"), answers.token)


async def _facebook(endpoints: Endpoints, answers: Answers) -> Identity:
    """`/me` with the fields asked for; the picture is an object (`{"data": {"url", "is_silhouette"}}`)."""
    user = await _json(await answers.client.get(
        endpoints.userinfo_url, params={"fields": "id,name,email,picture.width(400).height(400)"}), endpoints)
    picture = (user.get("picture") or {}).get("data") or {}
    url = None if picture.get("is_silhouette") else picture.get("url")
    return endpoints.identity(user.get("id"), user.get("email"), False, user.get("name"), url, answers.token)


async def _yandex(endpoints: Endpoints, answers: Answers) -> Identity:
    """Yandex ID's `/info` (its own `OAuth` authorization scheme); the avatar is an id on its picture host."""
    response = await answers.client.get(endpoints.userinfo_url, params={"format": "json"}, auth=None,
                                        headers={"authorization": f"OAuth {answers.token['access_token']}"})
    user = await _json(response, endpoints)
    avatar = user.get("default_avatar_id")
    picture = None if user.get("is_avatar_empty") or not avatar else \
        f"https://avatars.yandex.net/get-yapic/{avatar}/islands-200"
    return endpoints.identity(user.get("id"), user.get("default_email"), False,
                              user.get("real_name") or user.get("display_name") or user.get("login"), picture,
                              answers.token)


async def _vk(endpoints: Endpoints, answers: Answers) -> Identity:
    """VK gives the address and the user id in the token response; the name and photo come from the API's
    `users.get` (its token in the form, not the URL, so that no log line holds it)."""
    response = await answers.client.post(endpoints.userinfo_url, auth=None, data={
        "access_token": answers.token["access_token"], "v": "5.199", "fields": "photo_200"})
    found = (await _json(response, endpoints)).get("response") or [{}]
    user = found[0]
    name = " ".join(part for part in (user.get("first_name"), user.get("last_name")) if part)
    return endpoints.identity(answers.token.get("user_id") or user.get("id"), answers.token.get("email"), False,
                              name, user.get("photo_200"), answers.token)


async def _x(endpoints: Endpoints, answers: Answers) -> Identity:
    """X (Twitter) API v2 `users/me`: no address at all."""
    user = (await _json(await answers.client.get(endpoints.userinfo_url,
                                                 params={"user.fields": "profile_image_url"}), endpoints)).get("data")
    user = user or {}
    return endpoints.identity(user.get("id"), None, False, user.get("name") or user.get("username"),
                              user.get("profile_image_url"), answers.token)


async def _not_oauth(endpoints: Endpoints, answers: Answers) -> Identity:
    raise OAuthError(f"{endpoints.name} signs in with its widget, not OAuth")


@dataclass(frozen=True, slots=True)
class Profile:
    name: str
    read: Reader
    authorize_url: str = ""
    token_url: str = ""
    userinfo_url: str = ""
    discovery_url: str = ""
    scope: str = ""
    token_auth: str = "client_secret_post"


PROFILES: dict[str, Profile] = {
    "google": Profile("Google", _generic, discovery_url="https://accounts.google.com/.well-known/openid-configuration",
                      scope="openid email profile"),
    "github": Profile("GitHub", _github, "https://github.com/login/oauth/authorize",
                      "https://github.com/login/oauth/access_token", "https://api.github.com/user",
                      scope="read:user user:email"),
    "facebook": Profile("Facebook", _facebook, "https://www.facebook.com/v21.0/dialog/oauth",
                        "https://graph.facebook.com/v21.0/oauth/access_token", "https://graph.facebook.com/v21.0/me",
                        scope="email public_profile"),
    "yandex": Profile("Yandex", _yandex, "https://oauth.yandex.ru/authorize", "https://oauth.yandex.ru/token",
                      "https://login.yandex.ru/info", scope="login:email login:info login:avatar"),
    "vk": Profile("VK", _vk, "https://oauth.vk.com/authorize", "https://oauth.vk.com/access_token",
                  "https://api.vk.com/method/users.get", scope="email"),
    # X takes the client's secret only by HTTP Basic (a confidential client), and needs tweet.read for users/me
    "x": Profile("X", _x, "https://x.com/i/oauth2/authorize", "https://api.x.com/2/oauth2/token",
                 "https://api.x.com/2/users/me", scope="users.read tweet.read", token_auth="client_secret_basic"),
    TELEGRAM: Profile("Telegram", _not_oauth),
}


def endpoints(provider: str, configured: OAuthProvider) -> Endpoints:
    """The provider as configured over its profile; a generic one must name where to go."""
    profile = PROFILES.get(provider) or Profile(provider.capitalize(), _generic, scope="openid email profile")
    chosen = {name: getattr(configured, name) or getattr(profile, name)
              for name in ("name", "authorize_url", "token_url", "userinfo_url", "discovery_url", "scope")}
    if provider not in PROFILES and not chosen["discovery_url"] and not (
            chosen["authorize_url"] and chosen["token_url"] and chosen["userinfo_url"]):
        raise ValueError(f"OAUTH_PROVIDERS[{provider!r}]: a provider we do not know needs authorize_url, "
                         "token_url and userinfo_url, or an OpenID Connect discovery_url")
    if provider == TELEGRAM and not configured.client_secret:
        raise ValueError("OAUTH_PROVIDERS['telegram']: client_id is the bot's username, client_secret its token")
    return Endpoints(provider=provider, client_id=configured.client_id, client_secret=configured.client_secret,
                     read=profile.read, token_auth=profile.token_auth, emails_verified=configured.emails_verified,
                     **chosen)


def all_endpoints(configured: dict[str, OAuthProvider]) -> dict[str, Endpoints]:
    """Every configured provider, checked when the server starts (a bad entry stops it with its reason)."""
    return {provider: endpoints(provider, entry) for provider, entry in configured.items()}
