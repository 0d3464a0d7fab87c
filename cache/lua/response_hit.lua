-- A response cache hit (cache/response/responses.py `ResponseCache.look_up`): look_up's answer.
-- KEYS: look_up's (response_look_up.lua).
-- ARGV: look_up's.
-- Returns look_up's answer.
-- include: response_look_up
return look_up()
