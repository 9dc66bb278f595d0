// Every script binding (src/redis/bindings/) against its script's header, as compiled in: the
// key count against the file name and the KEYS[i] lines, the arguments against the ARGV[i]
// lines (a variable list against an ARGV[n..] line), each declared name against the words of its
// line, and every Status value against the Returns section. A mismatch names the script.
#include <algorithm>
#include <cctype>
#include <regex>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "src/redis/bindings/all.hpp"
#include "src/redis/script_sources.hpp"

namespace {

using namespace jq::redis;

struct Header {
  std::vector<std::string> keys;      // the KEYS[i] lines, in order
  std::vector<std::string> args;      // the ARGV[i] lines, in order
  std::vector<std::string> variable;  // ARGV[n..] lines
  std::string returns;                // from "Returns" to the end of the header
};

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// The header of `file`: the comment that opens with "--[[ <name>:" (the preamble comes first).
Header header_of(const Script& s) {
  const std::string stem(s.file.substr(0, s.file.rfind('-')));
  const std::string source(s.source);
  const auto begin = source.find("--[[ " + stem + ":");
  REQUIRE(begin != std::string::npos);
  const auto end = source.find("]]", begin);
  REQUIRE(end != std::string::npos);
  const std::string text = source.substr(begin, end - begin);
  Header h;
  static const std::regex key_line(R"(^\s*KEYS\[(\d+)\] )");
  static const std::regex arg_line(R"(^\s*ARGV\[(\d+)\] )");
  static const std::regex variable_line(R"(^\s*ARGV\[(\d+)\.\.\] )");
  std::size_t at = 0;
  while (at < text.size()) {
    auto nl = text.find('\n', at);
    if (nl == std::string::npos) nl = text.size();
    const std::string line = text.substr(at, nl - at);
    std::smatch m;
    if (std::regex_search(line, m, key_line)) {
      CHECK(std::stoul(m[1]) == h.keys.size() + 1);
      h.keys.push_back(lower(line));
    } else if (std::regex_search(line, m, arg_line)) {
      CHECK(std::stoul(m[1]) == h.args.size() + 1);
      h.args.push_back(lower(line));
    } else if (std::regex_search(line, m, variable_line)) {
      CHECK(std::stoul(m[1]) == h.args.size() + 1);
      h.variable.push_back(lower(line));
    }
    at = nl + 1;
  }
  const auto returns = text.find("Returns");
  if (returns != std::string::npos) h.returns = text.substr(returns);
  return h;
}

// Every word of `name` ("ready_stamp_us": ready, stamp) is in `line`; a last word that is a
// unit (ms, us, s) is left out, since headers write units as "(ms)".
void check_name(std::string_view name, const std::string& line) {
  std::vector<std::string> words;
  std::size_t at = 0;
  while (at <= name.size()) {
    auto end = name.find('_', at);
    if (end == std::string_view::npos) end = name.size();
    words.emplace_back(name.substr(at, end - at));
    at = end + 1;
  }
  if (words.size() > 1 && (words.back() == "ms" || words.back() == "us" || words.back() == "s")) {
    words.pop_back();
  }
  for (const std::string& w : words) {
    INFO("binding name '" << name << "' against the header line: " << line);
    CHECK(line.find(w) != std::string::npos);
  }
}

// The negative numbers of `text`: a script's error codes.
std::vector<std::int64_t> negative_numbers(const std::string& text) {
  static const std::regex negative("(^|[^\\w.-])(-[0-9]+)");
  std::vector<std::int64_t> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), negative);
       it != std::sregex_iterator(); ++it) {
    out.push_back(std::stoll((*it)[2].str()));
  }
  return out;
}

// How a header says how many ARGV each item of a variable list takes ("three per job").
std::string count_word(std::size_t n) {
  static const char* const words[] = {"zero", "one",    "two",    "three",   "four",
                                      "five", "six",    "seven",  "eight",   "nine",
                                      "ten",  "eleven", "twelve", "thirteen"};
  return n < 14 ? words[n] : std::to_string(n);
}

// `code` as a number of its own in `text` (not part of another number or word).
bool mentions(const std::string& text, std::int64_t code) {
  const std::regex number("(^|[^\\w.-])" + std::to_string(code) + "($|[^\\w.])");
  return std::regex_search(text, number);
}

template <class B>
void check_binding() {
  const Script& s = script(B::id);
  INFO("script lua/" << s.file << ".lua and its binding");
  const Header h = header_of(s);

  CHECK(B::key_names.size() == s.num_keys);
  CHECK(h.keys.size() == s.num_keys);
  for (std::size_t i = 0; i < std::min(h.keys.size(), B::key_names.size()); ++i) {
    check_name(B::key_names[i], h.keys[i]);
  }
  CHECK(B::arg_names.size() == h.args.size());
  for (std::size_t i = 0; i < std::min(h.args.size(), B::arg_names.size()); ++i) {
    check_name(B::arg_names[i], h.args[i]);
  }
  CHECK((B::args_per_item > 0) == !h.variable.empty());
  for (const std::string& line : h.variable) {
    INFO("the variable list: " << line);
    CHECK(line.find(count_word(B::args_per_item) + " per ") != std::string::npos);
  }

  // call() lays out exactly the declared keys and arguments.
  ScriptCall call = B::call({}, {});
  CHECK(call.id == B::id);
  std::size_t optional_keys = 0;
  if constexpr (requires { B::optional_keys; }) optional_keys = B::optional_keys;
  CHECK(call.keys.size() + optional_keys == B::key_names.size());
  std::size_t optional = 0;
  if constexpr (requires { B::optional_args; }) optional = B::optional_args;
  CHECK(call.args.size() + optional >= B::arg_names.size());
  CHECK(call.args.size() <= B::arg_names.size());

  if constexpr (requires { B::statuses; }) {
    CHECK_FALSE(h.returns.empty());
    for (auto status : B::statuses) {
      const auto code = static_cast<std::int64_t>(status);
      INFO("status " << code << " in: " << h.returns);
      CHECK(mentions(h.returns, code));
    }
    // And every error code the header documents has its Status value.
    for (std::int64_t code : negative_numbers(h.returns)) {
      INFO("documented code " << code << " has no Status value");
      CHECK(std::any_of(B::statuses.begin(), B::statuses.end(),
                        [&](auto s) { return static_cast<std::int64_t>(s) == code; }));
    }
  }
}

template <class... B>
void check_all(bindings::List<B...>) {
  (check_binding<B>(), ...);
}

template <class... B>
std::vector<ScriptId> ids(bindings::List<B...>) {
  return {B::id...};
}

}  // namespace

TEST_CASE("every script binding matches its script's header", "[unit]") {
  check_all(bindings::All{});
}

TEST_CASE("every script has exactly one binding", "[unit]") {
  auto bound = ids(bindings::All{});
  std::sort(bound.begin(), bound.end());
  CHECK(std::adjacent_find(bound.begin(), bound.end()) == bound.end());
  CHECK(bound.size() == all_scripts().size());
  CHECK(script_sources().size() == all_scripts().size());
}

TEST_CASE("an undocumented status is an error, never a default outcome", "[unit]") {
  Reply reply;
  reply.type = Reply::Type::integer;
  reply.integer = -7;
  auto status = bindings::CancelJob::decode(reply);
  REQUIRE_FALSE(status);
  CHECK(status.error().script == "cancelJob-8");
  CHECK(status.error().message().find("-7") != std::string::npos);

  Reply failed;
  failed.type = Reply::Type::array;
  failed.elements.push_back(reply);
  CHECK_FALSE(bindings::FailJob::decode(failed));
}
