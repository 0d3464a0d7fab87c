#!lua flags=allow-cross-slot-keys
-- A Redis Cluster node that holds data another server wrote forgets, by itself and at once, every key
-- under the prefixes given (its generations, epochs, live metas, WAL floor), then names itself the writer
-- (cache/failover.py). Checks the record again first: of the connections that found it wrong at once, one
-- forgets and the others see it done. It walks the node's keys (SCAN) in the script.
-- KEYS: the node's record.
-- ARGV: its run_id, the record's TTL, then the prefixes to forget.
-- Returns how many keys it forgot, or -1 when the record was already this node's.
if redis.call('GET', KEYS[1]) == ARGV[1] then return -1 end
local forgotten, cursor = 0, '0'
repeat
  local reply = redis.call('SCAN', cursor, 'COUNT', 1000)
  cursor = reply[1]
  for _, key in ipairs(reply[2]) do
    for i = 3, #ARGV do
      if string.sub(key, 1, #ARGV[i]) == ARGV[i] then
        redis.call('UNLINK', key)
        forgotten = forgotten + 1
        break
      end
    end
  end
until cursor == '0'
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
return forgotten
