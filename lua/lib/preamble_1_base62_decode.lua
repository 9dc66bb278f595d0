-- Shared by the scripts (in the function library, before them); takes no KEYS or ARGV of its own.
-- Inverse of base62(): the number a fixed-width base62 text stands for (e.g. a ready stamp).
local function base62_decode(text)
  local n = 0
  for i = 1, #text do
    local b = string.byte(text, i)
    local digit
    if b <= 57 then digit = b - 48      -- '0'-'9'
    elseif b <= 90 then digit = b - 55  -- 'A'-'Z'
    else digit = b - 61 end             -- 'a'-'z'
    n = n * 62 + digit
  end
  return n
end
