-- Shared by the scripts (in the function library, before them); takes no KEYS or ARGV of its own.
-- The MessagePack header of an array of n elements (n < 65536: fixarray or array 16), the form
-- every MessagePack encoder writes, so a list built by appending raw elements after it decodes
-- as any encoder's would. Its length is 1 for n < 16, else 3.
local function array_header(n)
  if n < 16 then return string.char(0x90 + n) end
  return string.char(0xdc, math.floor(n / 256), n % 256)
end
