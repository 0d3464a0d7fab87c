-- Adds to a counter that exists, and only then: one that does not starts from the database
-- (cache/live/views_import.py).
-- KEYS: the counter.
-- ARGV: the amount.
-- Returns the new count, or nil.
if redis.call('EXISTS', KEYS[1]) == 1 then return redis.call('INCRBY', KEYS[1], ARGV[1]) end
