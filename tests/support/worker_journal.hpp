// What jqworker's --journal files say about the attempts it ran (the format is in
// cmd/jqworker/journal.hpp): how often each job started and succeeded, and which jobs had an
// attempt start while another attempt of theirs still ran in the same process. Attempts of
// different processes cannot overlap when a test starts a worker only after the last one died,
// so each file is read on its own and an attempt left open at its end ended with its process.
#pragma once

#include <cstddef>
#include <map>
#include <set>
#include <string>

namespace jq::test {

struct WorkerJournal {
  std::size_t starts = 0;                       // attempts begun, in every file read
  std::map<std::string, int> starts_by_job;     // job id -> attempts begun
  std::map<std::string, int> successes_by_job;  // job id -> success answers made
  std::set<std::string> overlapping;            // jobs with two attempts running at once

  // Adds one process's journal (its file's text). Throws on a line it cannot read.
  void add(const std::string& text);
  // Success answers beyond the first of each job: work a pusher would see done twice.
  std::size_t duplicate_successes() const;
};

}  // namespace jq::test
