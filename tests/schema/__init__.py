"""The contract's execution (schema/, schema/engine/): policies, limits, plain fields, rendered answers,
pages, subscriptions, and the canaries of what it relies on past its libraries."""
