// Response bodies: built as JSON values, written as MessagePack or JSON per the request.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "api/error.hpp"
#include "api/media_type.hpp"
#include "common/expected.hpp"

namespace jq::api {

// raw_msgpack() values are json::binary_t with this subtype; encode_body() recognises it. Other
// binary values (no subtype, or another one) are plain bytes.
inline constexpr std::uint64_t kRawMsgpackSubtype = 0x6A;

// Wraps bytes that already hold one encoded MessagePack value (a worker's result, a job's
// argument) so they can sit inside a response value: MessagePack output splices them in
// unchanged; JSON output converts them, with bin and ext values as {"$bin": "<base64>"}.
// The bytes are trusted: pass only values this module decoded (JSON output writes null for
// bytes that are not one well-formed value).
nlohmann::json raw_msgpack(std::string bytes);

// Encodes a response value. Binary values (json::binary_t) become MessagePack bin, or
// {"$bin": "<base64>"} in JSON.
std::string encode_body(const nlohmann::json& value, MediaType type);

// The answer to a push of one job, {id, duplicate?: true, merged?: true}, written directly: the
// same bytes encode_body() gives for that value (keys in its sorted order), without building it.
// `id` is a job id (digits, '-' and base62 letters): nothing in it needs escaping.
std::string encode_push_answer(std::string_view id, bool duplicate, bool merged, MediaType type);

// The contract's error shape {error, message, field?, index?}.
std::string encode_error(const ApiError& error, MediaType type);

// One MessagePack value -> JSON value ({"$bin": base64} for bin/ext). bad_request when the
// bytes are not exactly one well-formed value.
Expected<nlohmann::json, ApiError> msgpack_to_json(std::string_view bytes);

// JSON text -> the same value as MessagePack bytes. bad_request (with the parser's position)
// when the text is not valid JSON.
Expected<std::string, ApiError> json_to_msgpack(std::string_view text);

}  // namespace jq::api
