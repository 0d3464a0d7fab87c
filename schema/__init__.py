"""The GraphQL contract: the types, queries, mutations and subscriptions of the Discours API.

- `schema`: builds the Strawberry schema (snake_case names as the contract has them)
- `query`, `viewer_query`, `mutation`, `subscription`, `auth`, `admin`: the root fields, each unpacking the
  context and calling one function of `resolvers/`
- `types`, `results`, `inputs`, `enums`: the contract's object, result, input and enum types
- `pages`: pages of shouts and reactions with their relations loaded first, together
- `context`: the per-request context and its DataLoaders
- `engine/`: how the schema is executed (plain fields, rendered answers, limits, errors), below the types
"""
