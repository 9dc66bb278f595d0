-- Shared by the scripts (in the function library, before them); takes no KEYS or ARGV of its own.
-- How many slots a packed record has, read from its array header (fixarray or array 16, the
-- headers pack_record writes), and the 0-based offset of its first slot; nil for any other.
local function record_slots(raw)
  local first = string.byte(raw, 1)
  if first >= 0x90 and first <= 0x9f then return first - 0x90, 1 end
  if first == 0xdc then
    local hi, lo = string.byte(raw, 2, 3)
    return hi * 256 + lo, 3
  end
  return nil
end
