// A msgpack-cxx packer stream that appends to a std::string: packs straight into the string that
// goes on, where an sbuffer starts at 8 KiB and would be copied out again.
#pragma once

#include <cstddef>
#include <string>

namespace jq {

struct StringSink {
  std::string& out;
  void write(const char* data, std::size_t size) { out.append(data, size); }
};

}  // namespace jq
