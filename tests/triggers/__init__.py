"""From a committed write to what it makes wrong (triggers/): the rules, related rows, the sink."""
