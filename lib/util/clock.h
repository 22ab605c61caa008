#pragma once
// Time and waiting, behind two functions, so that code which polls or backs off
// (the install engine's waits, hived apply's wait, Azure's long-running
// operations) runs in tests without sleeping: tests/support/fake_clock.h's
// FakeClock advances on every sleep. (HTTP retries take a sleep function of
// their own, http::Options::sleep.)

#include <functional>

namespace pai::util {

struct Clock {
  std::function<double()> now;        // seconds, monotonic
  std::function<void(double)> sleep;  // seconds; <= 0 returns at once
  // steady_clock and std::this_thread::sleep_for.
  static Clock real();
};

}  // namespace pai::util
