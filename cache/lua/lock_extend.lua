-- A lock's TTL renewed by its owner only (cache/redis/locks.py): a long holder keeps it, and one that lost
-- it learns so before its next step.
-- KEYS: the lock.
-- ARGV: the owner's token, the new TTL in milliseconds.
-- Returns 1 when renewed, 0 when the lock is another's or gone.
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
