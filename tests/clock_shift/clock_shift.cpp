// LD_PRELOAD'ed into a jqmaster by tests (tests/support/daemon.hpp, clock_offset_env): its wall
// clock runs JQ_TEST_CLOCK_SHIFT_S seconds off the machine's, its monotonic clock as it is, as on
// a machine whose clock is off. libfaketime does this too, but it allocates while it starts and
// jemalloc reads the clock while it starts: the two recurse and the process never comes up. This
// asks the kernel directly and allocates nothing.
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstdlib>
#include <ctime>

namespace {

long shift_s() {
  static const long shift = [] {
    const char* text = std::getenv("JQ_TEST_CLOCK_SHIFT_S");
    return text != nullptr ? std::strtol(text, nullptr, 10) : 0L;
  }();
  return shift;
}

}  // namespace

extern "C" {

int clock_gettime(clockid_t id, struct timespec* ts) noexcept {
  const long r = syscall(SYS_clock_gettime, id, ts);
  if (r == 0 && (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE)) ts->tv_sec += shift_s();
  return static_cast<int>(r);
}

int gettimeofday(struct timeval* tv, void* /*tz*/) noexcept {
  struct timespec ts {};
  if (clock_gettime(CLOCK_REALTIME, &ts) != 0) return -1;
  tv->tv_sec = ts.tv_sec;  // glibc declares it nonnull
  tv->tv_usec = ts.tv_nsec / 1000;
  return 0;
}

time_t time(time_t* out) noexcept {
  struct timespec ts {};
  clock_gettime(CLOCK_REALTIME, &ts);
  if (out != nullptr) *out = ts.tv_sec;
  return ts.tv_sec;
}

}  // extern "C"
