#include "src/redis/resp.hpp"

#include <hiredis/hiredis.h>
#include <hiredis/read.h>

#include <charconv>

namespace jq::redis {
namespace {

Reply convert(const redisReply* r) {
  Reply out;
  switch (r->type) {
    case REDIS_REPLY_INTEGER:
      out.type = Reply::Type::integer;
      out.integer = r->integer;
      break;
    case REDIS_REPLY_STRING:
      out.type = Reply::Type::string;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_STATUS:
      out.type = Reply::Type::status;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_ERROR:
      out.type = Reply::Type::error;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_ARRAY:
      out.type = Reply::Type::array;
      out.elements.reserve(r->elements);
      for (std::size_t i = 0; i < r->elements; ++i) out.elements.push_back(convert(r->element[i]));
      break;
    default:
      out.type = Reply::Type::nil;
  }
  return out;
}

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

// hiredis 0.14 allocates an array reply's element table as soon as it reads the header, so one
// "*311111111" from a broken or hostile server asks for 2.4 GB (found by tests/fuzz/fuzz_resp).
// Our largest replies hold a few thousand elements; anything above this is refused as malformed.
constexpr int kMaxArrayElements = 1 << 20;

const redisReplyObjectFunctions* hiredis_functions() {
  static const redisReplyObjectFunctions* const functions = [] {
    redisReader* reader = redisReaderCreate();
    const redisReplyObjectFunctions* f = reader->fn;
    redisReaderFree(reader);
    return f;
  }();
  return functions;
}

void* create_bounded_array(const redisReadTask* task, int elements) {
  if (elements > kMaxArrayElements) return nullptr;  // the reader reports an error
  return hiredis_functions()->createArray(task, elements);
}

const redisReplyObjectFunctions kBoundedFunctions = [] {
  redisReplyObjectFunctions f = *hiredis_functions();
  f.createArray = create_bounded_array;
  return f;
}();

}  // namespace

void ReplyParser::ReaderDeleter::operator()(void* reader) const {
  redisReaderFree(static_cast<redisReader*>(reader));
}

ReplyParser::ReplyParser()
    : reader_(redisReaderCreateWithFunctions(
          const_cast<redisReplyObjectFunctions*>(&kBoundedFunctions))) {
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
  Reply reply = convert(static_cast<redisReply*>(raw));
  freeReplyObject(raw);
  return reply;
}

}  // namespace jq::redis
