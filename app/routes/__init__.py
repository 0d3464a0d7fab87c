"""The routes beside /graphql.

- `observability`: `/metrics`, `/healthz`, `/readyz`
- `oauth`: the sign-in flows with a provider (auth/oauth.py)
- `mail_links`: the pages the links in our mail open
"""
