#include "tests/support/store_harness.hpp"

#include "src/redis/address.hpp"

namespace jq::test {

StoreHarness::StoreHarness(std::uint16_t redis_port)
    : StoreHarness("redis://127.0.0.1:" + std::to_string(redis_port)) {}

StoreHarness::StoreHarness(const std::string& url) {
  client_ = std::make_unique<redis::Client>(io_.get_executor(), *redis::parse_target(url),
                                            redis::ConnectionOptions{});
  client_->start();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!client_->ready()) {
    if (std::chrono::steady_clock::now() > deadline) {
      throw std::runtime_error("the store harness could not connect to Redis");
    }
    io_.run_one_for(std::chrono::milliseconds(50));
  }
}

StoreHarness::~StoreHarness() {
  client_->stop();
  io_.run_for(std::chrono::milliseconds(50));
}

void StoreHarness::run(boost::asio::awaitable<void> task) {
  std::exception_ptr error;
  bool done = false;
  boost::asio::co_spawn(io_, std::move(task), [&](std::exception_ptr e) {
    error = e;
    done = true;
  });
  drive(done);
  if (error) std::rethrow_exception(error);
}

void StoreHarness::drive(const bool& done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!done) {
    if (std::chrono::steady_clock::now() > deadline) {
      throw std::runtime_error("a store call did not finish within 10 s");
    }
    io_.run_one_for(std::chrono::milliseconds(50));
  }
}

}  // namespace jq::test
