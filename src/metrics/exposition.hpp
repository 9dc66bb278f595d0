// The Prometheus text exposition format, version 0.0.4: `# HELP` and `# TYPE` lines, then one
// line per sample, `name{label="value",...} value`. Only the writing lives here; what is written
// comes from the registry (src/metrics/registry.hpp) or, for values read at scrape time, from
// the caller.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace jq::metrics {

// What Content-Type a scrape is answered with.
inline constexpr std::string_view kContentType = "text/plain; version=0.0.4; charset=utf-8";

// Label values of one child, in the order of its family's label names.
using LabelValues = std::vector<std::string>;

enum class Type { counter, gauge, histogram };

// What every family has: its name, help text, type and label names. Names are compile-time
// constants of this program, so they are not checked against the format's name rules.
struct Desc {
  std::string name;
  std::string help;
  Type type = Type::counter;
  std::vector<std::string> label_names;
};

std::string_view to_string(Type type);

// A label value with `\`, `"` and newlines escaped as the format requires.
std::string escape_label_value(std::string_view value);
// HELP text with `\` and newlines escaped.
std::string escape_help(std::string_view help);
// A sample value: integers without a fraction, others in the shortest form that reads back the
// same, `+Inf`, `-Inf` and `NaN` spelled as the format spells them.
std::string format_value(double value);

// `# HELP` and `# TYPE` of `desc`.
void write_header(std::string& out, const Desc& desc);
// One sample line: `name` (the family's name plus a suffix such as `_bucket`), the family's
// labels with `values`, then `extra` (e.g. {"le", "0.5"}) when its name is not empty.
void write_sample(std::string& out, std::string_view name,
                  const std::vector<std::string>& label_names, const LabelValues& values,
                  double value, std::pair<std::string_view, std::string_view> extra = {});

// A family whose values are read at scrape time (not kept in a registry): gauges, or counters
// kept elsewhere (in Redis). Header and samples, written once and forgotten.
struct ScrapedSample {
  LabelValues labels;
  double value = 0;
};
void write_scraped(std::string& out, const Desc& desc, std::span<const ScrapedSample> samples);

}  // namespace jq::metrics
