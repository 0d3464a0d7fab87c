-- A lock released by its owner only (cache/redis/locks.py).
-- KEYS: the lock.
-- ARGV: the owner's token.
-- Returns 1 when released, 0 when the lock is another's or gone.
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
