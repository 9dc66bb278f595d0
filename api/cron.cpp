#include "api/cron.hpp"

#include <array>
#include <cctype>
#include <charconv>
#include <optional>
#include <vector>

namespace jq::api {
namespace {

struct FieldRule {
  std::string_view name;
  int min;
  int max;
  const std::array<std::string_view, 12>* names = nullptr;
  int first_named = 0;            // the value of names[0]
  std::string_view names_hint{};  // for a message
  bool weekday = false;           // 7 is Sunday again, stored as 0
};

constexpr std::array<std::string_view, 12> kMonthNames = {"jan", "feb", "mar", "apr", "may", "jun",
                                                          "jul", "aug", "sep", "oct", "nov", "dec"};
constexpr std::array<std::string_view, 12> kWeekdayNames = {
    "sun", "mon", "tue", "wed", "thu", "fri", "sat", "", "", "", "", ""};

constexpr FieldRule kSecond{"second", 0, 59};
constexpr FieldRule kMinute{"minute", 0, 59};
constexpr FieldRule kHour{"hour", 0, 23};
constexpr FieldRule kDay{"day-of-month", 1, 31};
constexpr FieldRule kMonth{"month", 1, 12, &kMonthNames, 1, "month name (jan-dec)"};
constexpr FieldRule kWeekday{"day-of-week", 0, 7, &kWeekdayNames, 0, "weekday name (sun-sat)",
                             true};

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::vector<std::string_view> split(std::string_view text, char by) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  for (;;) {
    const std::size_t at = text.find(by, start);
    parts.push_back(text.substr(start, at == std::string_view::npos ? at : at - start));
    if (at == std::string_view::npos) return parts;
    start = at + 1;
  }
}

std::vector<std::string_view> split_spaces(std::string_view text) {
  std::vector<std::string_view> parts;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
    const std::size_t start = i;
    while (i < text.size() && text[i] != ' ' && text[i] != '\t') ++i;
    if (i > start) parts.push_back(text.substr(start, i - start));
  }
  return parts;
}

// One value of a field: digits, or a name where the field has names.
Expected<int, std::string> value(std::string_view text, const FieldRule& rule) {
  int v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (!text.empty() && ec == std::errc{} && end == text.data() + text.size()) {
    if (v < rule.min || v > rule.max) {
      return unexpected(std::string(text) + " is not in " + std::to_string(rule.min) + "-" +
                        std::to_string(rule.max));
    }
    return v;
  }
  if (rule.names != nullptr) {
    const std::string name = lower(text);
    for (std::size_t i = 0; i < rule.names->size(); ++i) {
      if (!(*rule.names)[i].empty() && (*rule.names)[i] == name) {
        return rule.first_named + static_cast<int>(i);
      }
    }
    return unexpected("'" + std::string(text) + "' is neither a number nor a " +
                      std::string(rule.names_hint));
  }
  return unexpected("'" + std::string(text) + "' is not a number");
}

// One element of a comma list into `bits` (indexed by value; a weekday 7 sets 0).
template <std::size_t N>
Expected<bool, std::string> add_element(std::string_view element, const FieldRule& rule,
                                        std::bitset<N>& bits) {
  std::string_view range = element;
  int step = 1;
  if (const auto slash = element.find('/'); slash != std::string_view::npos) {
    range = element.substr(0, slash);
    const std::string_view step_text = element.substr(slash + 1);
    auto [end, ec] = std::from_chars(step_text.data(), step_text.data() + step_text.size(), step);
    if (step_text.empty() || ec != std::errc{} || end != step_text.data() + step_text.size() ||
        step < 1 || step > rule.max) {
      return unexpected("the step '" + std::string(step_text) + "' is not a number in 1-" +
                        std::to_string(rule.max));
    }
    if (range != "*" && range.find('-') == std::string_view::npos) {
      return unexpected("a step needs a range before it: '*/" + std::string(step_text) +
                        "' or 'a-b/" + std::string(step_text) + "'");
    }
  }
  int low = rule.min;
  int high = rule.max;
  if (range != "*") {
    const auto dash = range.find('-');
    auto first = value(range.substr(0, dash), rule);
    if (!first) return unexpected(first.error());
    low = high = *first;
    if (dash != std::string_view::npos) {
      auto last = value(range.substr(dash + 1), rule);
      if (!last) return unexpected(last.error());
      high = *last;
      if (high < low) {
        return unexpected("the range '" + std::string(range) + "' ends before it starts");
      }
    }
  } else if (rule.weekday) {
    high = 6;  // `*/2` steps over the week once; 7 would add a second Sunday
  }
  for (int v = low; v <= high; v += step) {
    bits.set(static_cast<std::size_t>(rule.weekday && v == 7 ? 0 : v));
  }
  return true;
}

template <std::size_t N>
Expected<std::bitset<N>, std::string> parse_field(std::string_view text, const FieldRule& rule) {
  std::bitset<N> bits;
  for (std::string_view element : split(text, ',')) {
    if (element.empty()) return unexpected(std::string("an empty element in the list"));
    auto added = add_element(element, rule, bits);
    if (!added) return unexpected(added.error());
  }
  return bits;
}

std::optional<std::string_view> macro(std::string_view text) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 7> kMacros = {{
      {"@yearly", "0 0 1 1 *"},
      {"@annually", "0 0 1 1 *"},
      {"@monthly", "0 0 1 * *"},
      {"@weekly", "0 0 * * 0"},
      {"@daily", "0 0 * * *"},
      {"@midnight", "0 0 * * *"},
      {"@hourly", "0 * * * *"},
  }};
  const std::string name = lower(text);
  for (const auto& [m, expansion] : kMacros) {
    if (m == name) return expansion;
  }
  return std::nullopt;
}

std::string ordinal(std::size_t i) {
  static constexpr std::array<std::string_view, 6> kOrdinals = {"1st", "2nd", "3rd",
                                                                "4th", "5th", "6th"};
  return std::string(kOrdinals[i]);
}

}  // namespace

Expected<CronSpec, std::string> parse_cron(std::string_view text) {
  if (text.size() > kMaxCronBytes) {
    return unexpected("is longer than " + std::to_string(kMaxCronBytes) + " bytes");
  }
  std::vector<std::string_view> fields = split_spaces(text);
  if (fields.size() == 1 && fields[0].starts_with('@')) {
    const auto expansion = macro(fields[0]);
    if (!expansion) {
      return unexpected("'" + std::string(fields[0]) +
                        "' is not a macro: use @yearly, @annually, @monthly, @weekly, @daily, "
                        "@midnight or @hourly");
    }
    fields = split_spaces(*expansion);
  }
  if (fields.size() != 5 && fields.size() != 6) {
    return unexpected("has " + std::to_string(fields.size()) +
                      " fields: write 5 (minute hour day-of-month month day-of-week) or 6 "
                      "(second first)");
  }
  const bool with_seconds = fields.size() == 6;
  const std::size_t base = with_seconds ? 1 : 0;
  const auto fail = [&](std::size_t i, const FieldRule& rule, const std::string& why) {
    return unexpected("the " + std::string(rule.name) + " field (" + ordinal(i) + " of " +
                      std::to_string(fields.size()) + ") '" + std::string(fields[i]) + "': " + why);
  };

  CronSpec spec;
  if (with_seconds) {
    auto s = parse_field<60>(fields[0], kSecond);
    if (!s) return fail(0, kSecond, s.error());
    spec.seconds = *s;
  } else {
    spec.seconds.set(0);
  }
  auto minutes = parse_field<60>(fields[base], kMinute);
  if (!minutes) return fail(base, kMinute, minutes.error());
  auto hours = parse_field<24>(fields[base + 1], kHour);
  if (!hours) return fail(base + 1, kHour, hours.error());
  auto days = parse_field<32>(fields[base + 2], kDay);
  if (!days) return fail(base + 2, kDay, days.error());
  auto months = parse_field<13>(fields[base + 3], kMonth);
  if (!months) return fail(base + 3, kMonth, months.error());
  auto weekdays = parse_field<7>(fields[base + 4], kWeekday);
  if (!weekdays) return fail(base + 4, kWeekday, weekdays.error());
  spec.minutes = *minutes;
  spec.hours = *hours;
  spec.days = *days;
  spec.months = *months;
  spec.weekdays = *weekdays;
  spec.any_day_of_month = fields[base + 2].starts_with('*');
  spec.any_day_of_week = fields[base + 4].starts_with('*');
  spec.follows_clock = fields[base].starts_with('*') || fields[base + 1].starts_with('*');
  // A day must be one of the days of the month given (Vixie's rule above, unless both day fields
  // are restricted): one that no month given has ("0 0 30 2 *") would never run.
  if (spec.any_day_of_month || spec.any_day_of_week) {
    static constexpr std::array<int, 13> kLongest = {0,  31, 29, 31, 30, 31, 30,
                                                     31, 31, 30, 31, 30, 31};
    bool some_day = false;
    for (int month = 1; month <= 12 && !some_day; ++month) {
      if (!spec.months.test(static_cast<std::size_t>(month))) continue;
      for (int day = 1; day <= kLongest[static_cast<std::size_t>(month)] && !some_day; ++day) {
        some_day = spec.days.test(static_cast<std::size_t>(day));
      }
    }
    if (!some_day) {
      return fail(base + 2, kDay,
                  "no month the month field allows has such a day (February has 29 days at "
                  "most; April, June, September and November 30), so it would never run");
    }
  }
  return spec;
}

}  // namespace jq::api
