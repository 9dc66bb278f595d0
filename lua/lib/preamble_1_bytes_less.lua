-- Shared by the scripts (in the function library, before them); takes no KEYS or ARGV of its own.
-- a < b in byte order, the order of zset members with equal scores. Lua's own '<' on strings
-- uses strcoll, and redis-server takes LC_COLLATE from its environment: under e.g. en_US it
-- would put 'a' before 'B', which base62 puts after.
local function bytes_less(a, b)
  for i = 1, math.min(#a, #b) do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end
