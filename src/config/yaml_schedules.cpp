// The `schedules` section: each entry is the object of POST /v1/schedules, decoded by the API's
// own decoder (api::decode_schedule) from the entry turned into MessagePack, so the file cannot
// hold a schedule the API would refuse. An error names the key under the entry
// ("schedules[0].cron").
#include <algorithm>

#include "api/schedule.hpp"
#include "src/config/sections.hpp"

namespace jq::config::detail {

std::vector<api::Schedule> parse_schedules(const At& at) {
  std::vector<api::Schedule> schedules;
  for (const At& item : items(at, "must be a list of schedules, each as in POST /v1/schedules")) {
    if (!item.node.IsMap()) {
      fail(item,
           "must be a map {name, cron | every, timezone, job, overlap, missed, start_at, end_at, "
           "paused} as in POST /v1/schedules");
    }
    auto schedule = api::decode_schedule(to_msgpack(item), api::MediaType::msgpack);
    if (!schedule) fail_api(item, schedule.error());
    const auto same = std::find_if(schedules.begin(), schedules.end(), [&](const api::Schedule& o) {
      return o.name == schedule->name;
    });
    if (same != schedules.end()) {
      throw ConfigError(join_path(item.path, "name"), "repeats " + at.path + "[" +
                                                          std::to_string(same - schedules.begin()) +
                                                          "].name; list each schedule once");
    }
    schedules.push_back(std::move(*schedule));
  }
  return schedules;
}

}  // namespace jq::config::detail
