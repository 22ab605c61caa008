#include "util/clock.h"

#include <chrono>
#include <thread>

namespace pai::util {

Clock Clock::real() {
  Clock c;
  c.now = [] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  };
  c.sleep = [](double s) {
    if (s > 0) std::this_thread::sleep_for(std::chrono::duration<double>(s));
  };
  return c;
}

}  // namespace pai::util
