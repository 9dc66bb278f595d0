// What a component with state of its own (a connection, its coroutine) runs its handlers on: a
// strand of `executor` when several threads run the io_context, or the executor itself when one
// thread does, which already runs them one at a time. There a strand's lock and reference counts
// only cost: 6 % of a single push's CPU in the master (docs/BENCHMARKS.md).
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/strand.hpp>

namespace jq {

template <class Executor>
boost::asio::any_io_executor serial_executor(const Executor& executor, bool one_thread) {
  if (one_thread) return executor;
  return boost::asio::make_strand(executor);
}

}  // namespace jq
