#include "src/redis/resp.hpp"

#include <hiredis/hiredis.h>
#include <hiredis/read.h>

#include <vector>

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

}  // namespace

void append_command(std::string& out, std::span<const std::string_view> args) {
  // Small commands are the common case: keep their argument tables on the stack.
  constexpr std::size_t kInline = 16;
  const char* argv_inline[kInline];
  std::size_t len_inline[kInline];
  std::vector<const char*> argv_heap;
  std::vector<std::size_t> len_heap;
  const char** argv = argv_inline;
  std::size_t* lens = len_inline;
  if (args.size() > kInline) {
    argv_heap.resize(args.size());
    len_heap.resize(args.size());
    argv = argv_heap.data();
    lens = len_heap.data();
  }
  for (std::size_t i = 0; i < args.size(); ++i) {
    argv[i] = args[i].data();
    lens[i] = args[i].size();
  }
  char* cmd = nullptr;
  int n = redisFormatCommandArgv(&cmd, static_cast<int>(args.size()), argv, lens);
  if (n > 0) out.append(cmd, static_cast<std::size_t>(n));
  redisFreeCommand(cmd);
}

void ReplyParser::ReaderDeleter::operator()(void* reader) const {
  redisReaderFree(static_cast<redisReader*>(reader));
}

ReplyParser::ReplyParser() : reader_(redisReaderCreate()) {
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
