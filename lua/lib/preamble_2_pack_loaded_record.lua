-- Shared by the scripts (in the function library, before them); takes no KEYS or ARGV of its own.
-- A record that load_record_without_argument loaded (with the raw record, `from` and `to` it
-- gave), packed. While it packs into as many slots as it was loaded with, its loaded bytes up to
-- the end of the argument (the array header, the name and the argument, which no script changes
-- in place) are kept and only the slots after them are packed. Each string the argument's size
-- costs Redis about 1 us per KiB: this makes two (the kept bytes, the joined record), where
-- unpacking and packing a 13-slot record made three (the argument, the packed slots, the header
-- joined to them); a longer record packs as one table, two either way. Otherwise, or loaded
-- whole, as pack_record packs it.
local function pack_loaded_record(record, raw, from, to)
  if record[R_ARGUMENT] ~= false then return pack_record(record) end
  local n = packed_slots(record)
  if n == record_slots(raw) then
    return string.sub(raw, 1, to) .. cmsgpack.pack(unpack(record, 3, n))
  end
  record[R_ARGUMENT] = string.sub(raw, from, to)
  return pack_record(record)
end
