#include "src/redis/resp.hpp"

#include <hiredis/read.h>

#include <algorithm>
#include <charconv>

namespace jq::redis {
namespace {

void append_header(std::string& out, char kind, std::size_t n) {
  char buf[24];
  buf[0] = kind;
  char* end = std::to_chars(buf + 1, buf + sizeof buf - 2, n).ptr;
  *end++ = '\r';
  *end++ = '\n';
  out.append(buf, static_cast<std::size_t>(end - buf));
}

}  // namespace

void append_array_header(std::string& out, std::size_t count) {
  append_header(out, '*', count);
}

void append_bulk(std::string& out, std::string_view arg) {
  append_header(out, '$', arg.size());
  out.append(arg);
  out.append("\r\n", 2);
}

namespace {

// Written by hand rather than with redisFormatCommandArgv: hiredis formats every length with
// sprintf and into a fresh heap buffer, which was a fifth of the master's instructions.
template <class Args>
void append_all(std::string& out, const Args& args) {
  std::size_t size = 16;
  for (const auto& a : args) size += a.size() + 16;
  out.reserve(out.size() + size);
  append_header(out, '*', args.size());
  for (const auto& a : args) append_bulk(out, a);
}

}  // namespace

void append_command(std::string& out, std::span<const std::string_view> args) {
  append_all(out, args);
}
void append_command(std::string& out, std::span<const std::string> args) {
  append_all(out, args);
}

namespace {

// hiredis's reader parses; these functions build our Reply tree as it goes (hiredis's own
// objects, copied into Replies and freed, cost a second allocation and copy of every string).
// A root is allocated; every other value is appended to its parent's elements: hiredis makes an
// array's elements in order, each after the one before is whole, and holds on only to the arrays
// still open, whose element vectors do not grow meanwhile. hiredis frees only roots (a reply
// abandoned half-read, or the reader freed with one pending). The functions are called from
// hiredis's C code: nothing may throw through it, so a failure returns null, which hiredis
// reports as out of memory (and frees the root).

// An array's header says how many elements follow before any of them came, so it is trusted
// only so far: one "*311111111" from a broken or hostile server would otherwise commit gigabytes
// (found by tests/fuzz/fuzz_resp). Our largest replies hold a few thousand elements; a count
// above kMaxArrayElements is refused as malformed, and room for at most kReserved is made ahead.
constexpr int kMaxArrayElements = 1 << 20;
constexpr int kReserved = 1024;

// `fill` sets the new value; the root, if that is what it is, is handed to hiredis only then.
template <class Fill>
void* create(const redisReadTask* task, Fill fill) noexcept {
  try {
    if (task->parent == nullptr) {
      auto root = std::make_unique<Reply>();
      fill(*root);
      return root.release();
    }
    auto& siblings = static_cast<Reply*>(task->parent->obj)->elements;
    const auto idx = static_cast<std::size_t>(task->idx);
    if (siblings.size() <= idx) siblings.resize(idx + 1);
    fill(siblings[idx]);
    return &siblings[idx];
  } catch (...) {
    return nullptr;
  }
}

void* create_string(const redisReadTask* task, char* str, std::size_t len) {
  return create(task, [&](Reply& r) {
    switch (task->type) {
      case REDIS_REPLY_ERROR:
        r.type = Reply::Type::error;
        break;
      case REDIS_REPLY_STATUS:
        r.type = Reply::Type::status;
        break;
      default:
        r.type = Reply::Type::string;
    }
    r.str.assign(str, len);
  });
}

void* create_array(const redisReadTask* task, int elements) {
  if (elements > kMaxArrayElements) return nullptr;  // the reader reports an error
  return create(task, [&](Reply& r) {
    r.type = Reply::Type::array;
    r.elements.reserve(static_cast<std::size_t>(std::min(elements, kReserved)));
  });
}

void* create_integer(const redisReadTask* task, long long value) {
  return create(task, [&](Reply& r) {
    r.type = Reply::Type::integer;
    r.integer = value;
  });
}

void* create_nil(const redisReadTask* task) {
  return create(task, [](Reply&) {});
}

void free_root(void* root) {
  delete static_cast<Reply*>(root);
}

redisReplyObjectFunctions kReplyFunctions{create_string, create_array, create_integer, create_nil,
                                          free_root};

}  // namespace

void ReplyParser::ReaderDeleter::operator()(void* reader) const {
  redisReaderFree(static_cast<redisReader*>(reader));
}

ReplyParser::ReplyParser() : reader_(redisReaderCreateWithFunctions(&kReplyFunctions)) {
  // Replies can be large (a batch of job records); never let hiredis cap the buffer.
  static_cast<redisReader*>(reader_.get())->maxbuf = 0;
}

ReplyParser::~ReplyParser() = default;

void ReplyParser::feed(const char* data, std::size_t size) {
  if (redisReaderFeed(static_cast<redisReader*>(reader_.get()), data, size) != REDIS_OK) {
    failed_ = true;
  }
}

std::optional<Reply> ReplyParser::next() {
  void* raw = nullptr;
  if (redisReaderGetReply(static_cast<redisReader*>(reader_.get()), &raw) != REDIS_OK) {
    failed_ = true;
    return std::nullopt;
  }
  if (raw == nullptr) return std::nullopt;
  std::unique_ptr<Reply> root(static_cast<Reply*>(raw));
  return std::move(*root);
}

}  // namespace jq::redis
