"""The settings object: read from every layer, so it sits below them all and imports none of them."""
