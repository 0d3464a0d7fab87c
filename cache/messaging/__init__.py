"""Messages between workers and to clients, after a commit.

- `pubsub`: live events over pub/sub, and each worker's hub that fans them out to subscriptions
- `delayed`: the delayed queue: messages due later, taken once, never lost
"""
