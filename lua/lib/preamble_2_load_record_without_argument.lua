-- Shared by the scripts (in the function library, before them); takes no KEYS or ARGV of its own.
-- A record without its argument, for a script that reads the other slots only: the argument is
-- often most of a record, and every Lua string made of one costs Redis a pass over all of its
-- bytes (Redis hashes whole strings: about 1 us per KiB). R_ARGUMENT holds false; the record is
-- returned with `raw` and where the argument is in it (1-based, inclusive), so that a script
-- that stores the record after all reads it then: string.sub(raw, from, to). A record whose
-- argument is not where a record's is (never written so) is loaded whole: R_ARGUMENT is false
-- only when it was skipped.
local function load_record_without_argument(jobs_prefix, field)
  local raw = rcall('HGET', record_at(jobs_prefix, field))
  if not raw then return nil end
  local n, at = record_slots(raw)
  local after_name, name
  if n and n >= 13 then after_name, name = cmsgpack.unpack_limit(raw, 1, at) end
  local b = type(name) == 'string' and after_name > 0 and string.byte(raw, after_name + 1)
  local size, header  -- the argument, a str: its bytes and its header's
  if b and b >= 0xa0 and b <= 0xbf then
    size, header = b - 0xa0, 1
  elseif b == 0xd9 then
    size, header = string.byte(raw, after_name + 2), 2
  elseif b == 0xda then
    local hi, lo = string.byte(raw, after_name + 2, after_name + 3)
    size, header = hi * 256 + lo, 3
  elseif b == 0xdb then
    local b1, b2, b3, b4 = string.byte(raw, after_name + 2, after_name + 5)
    size, header = ((b1 * 256 + b2) * 256 + b3) * 256 + b4, 5
  end
  if not size then return load_record(jobs_prefix, field) end
  local from = after_name + header + 1
  local to = from + size - 1
  local record = {name, false, select(2, cmsgpack.unpack_limit(raw, n - 2, to))}
  return whole_record(record, n), raw, from, to
end
