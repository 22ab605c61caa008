#pragma once
// Time and waiting, behind two functions, so that code which polls or backs off
// (the install engine's waits, HTTP retries, Azure's long-running operations,
// the registry's lock) runs in tests without sleeping: tests/support's
// FakeClock advances on every sleep.

#include <functional>

namespace pai::util {

struct Clock {
  std::function<double()> now;        // seconds, monotonic
  std::function<void(double)> sleep;  // seconds; <= 0 returns at once
  // steady_clock and std::this_thread::sleep_for.
  static Clock real();
};

}  // namespace pai::util
