// HTTP header lines written by hand, for the messages the master writes whole into one buffer
// (its answers, its requests to workers): Beast's serializer walks a chain of buffer views per
// write, which cost more instructions than anything else around it.
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include <boost/container/small_vector.hpp>

namespace jq {

// Inline up to the usual number (an answer's and a job request's headers): one allocation less
// per message.
using HeaderLines =
    boost::container::small_vector<std::pair<std::string_view, std::string_view>, 8>;

// Appends "Name: value\r\n" for each header; of headers with the same name (ASCII,
// case-insensitive) only the last is written, so a later one replaces an earlier default. Names
// and values must already be valid (tokens; no CR, LF or NUL).
void append_header_lines(std::string& out, const HeaderLines& headers);

}  // namespace jq
