#pragma once
// A util::Clock for tests that never sleeps: each sleep moves it on by the time
// asked, and is recorded. Safe to use from many threads (read `t` and `sleeps`
// directly only when no other thread uses the clock; else `taken()`).

#include <mutex>
#include <vector>

#include "util/clock.h"

namespace pai::testing {

struct FakeClock {
  double t = 1000;             // seconds
  std::vector<double> sleeps;  // every sleep asked for, in order

  // A clock over this one; it must outlive the clock.
  util::Clock clock() {
    util::Clock c;
    c.now = [this] {
      std::lock_guard lock(mu_);
      return t;
    };
    c.sleep = [this](double s) {
      std::lock_guard lock(mu_);
      sleeps.push_back(s);
      t += s;
    };
    return c;
  }
  std::vector<double> taken() {
    std::lock_guard lock(mu_);
    return sleeps;
  }

 private:
  std::mutex mu_;
};

}  // namespace pai::testing
