#include "src/metrics/exposition.hpp"

#include <charconv>
#include <cmath>
#include <cstdint>

namespace jq::metrics {
namespace {

// Below this magnitude every integer-valued double is exact and prints as digits only.
constexpr double kMaxPlainInteger = 1e15;
// Fractions at least this large print in fixed notation ("0.0001"), as Go and Python clients
// print bucket bounds; smaller ones in the shortest (scientific) form.
constexpr double kMinFixed = 1e-6;

std::string escape(std::string_view text, bool quotes) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '"':
        out += quotes ? "\\\"" : "\"";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace

std::string_view to_string(Type type) {
  switch (type) {
    case Type::counter:
      return "counter";
    case Type::gauge:
      return "gauge";
    case Type::histogram:
      return "histogram";
  }
  return "untyped";
}

std::string escape_label_value(std::string_view value) {
  return escape(value, true);
}

std::string escape_help(std::string_view help) {
  return escape(help, false);
}

std::string format_value(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char buf[64];
  std::to_chars_result r{};
  const double magnitude = std::fabs(value);
  if (magnitude < kMaxPlainInteger && value == std::trunc(value)) {
    r = std::to_chars(buf, buf + sizeof buf, static_cast<std::int64_t>(value));
  } else if (magnitude >= kMinFixed && magnitude < kMaxPlainInteger) {
    r = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::fixed);
  } else {
    r = std::to_chars(buf, buf + sizeof buf, value);
  }
  return std::string(buf, r.ptr);
}

void write_header(std::string& out, const Desc& desc) {
  out += "# HELP ";
  out += desc.name;
  out += ' ';
  out += escape_help(desc.help);
  out += "\n# TYPE ";
  out += desc.name;
  out += ' ';
  out += to_string(desc.type);
  out += '\n';
}

void write_sample(std::string& out, std::string_view name,
                  const std::vector<std::string>& label_names, const LabelValues& values,
                  double value, std::pair<std::string_view, std::string_view> extra) {
  out += name;
  const bool has_extra = !extra.first.empty();
  if (!label_names.empty() || has_extra) {
    out += '{';
    const char* separator = "";
    for (std::size_t i = 0; i < label_names.size() && i < values.size(); ++i) {
      out += separator;
      out += label_names[i];
      out += "=\"";
      out += escape_label_value(values[i]);
      out += '"';
      separator = ",";
    }
    if (has_extra) {
      out += separator;
      out += extra.first;
      out += "=\"";
      out += escape_label_value(extra.second);
      out += '"';
    }
    out += '}';
  }
  out += ' ';
  out += format_value(value);
  out += '\n';
}

void write_scraped(std::string& out, const Desc& desc, std::span<const ScrapedSample> samples) {
  write_header(out, desc);
  for (const ScrapedSample& s : samples) {
    write_sample(out, desc.name, desc.label_names, s.labels, s.value);
  }
}

}  // namespace jq::metrics
