"""Whole answers kept, so that a hot query is answered without executing GraphQL.

- `responses`: the response cache: a response kept under every stamp its computation read, looked up before
  execution; claims that let one worker compute for all
- `rendered`: one root field's answer kept as the JSON it is sent as
- `persisted`: persisted query documents (APQ)

The stamps come from the core (`cache.store`, `cache.response_capture`): a response is as correct as each
value it was made of.
"""
