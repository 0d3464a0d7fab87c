"""The cache (cache/): the stamped-value core, its Redis transport and Lua, the whole-response cache, the
live structures and messaging."""
