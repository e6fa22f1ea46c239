// The publisher's wait between pictures (publish_pace.hpp): pictures take at most their share of the
// workers' time, and never come faster than the publish interval.
#include <doctest/doctest.h>

#include <chrono>

#include "core/run/publish_pace.hpp"

using namespace maskscope;
using std::chrono::milliseconds;
using std::chrono::nanoseconds;

namespace {
// The share of `workers` threads' time that pictures of cost `cost`, one every cost + wait, take.
double share_taken(nanoseconds cost, nanoseconds wait, int workers) {
  return double(cost.count()) / (double(workers) * double((cost + wait).count()));
}
}  // namespace

TEST_CASE("publish_wait: a cheap picture comes at the publish interval") {
  // n 10: a snapshot costs well under a millisecond.
  CHECK(publish_wait(milliseconds(25), nanoseconds(200'000), 2, 0.05) == milliseconds(25));
  CHECK(publish_wait(milliseconds(25), nanoseconds(0), 2, 0.05) == milliseconds(25));
}

TEST_CASE("publish_wait: an expensive picture waits until pictures take their share of the workers' time") {
  // n 512 in the window: 30 ms of snapshot and 30 ms of panels and frame, two workers, 5%: wait 540 ms.
  const nanoseconds cost = milliseconds(60);
  const nanoseconds wait = publish_wait(milliseconds(25), cost, 2, 0.05);
  CHECK(wait == milliseconds(540));
  CHECK(share_taken(cost, wait, 2) == doctest::Approx(0.05));
  // One worker: twice the wait for the same share; ten times the share: a tenth of the cycle.
  CHECK(publish_wait(milliseconds(25), cost, 1, 0.05) == milliseconds(1140));
  CHECK(share_taken(cost, publish_wait(milliseconds(25), cost, 4, 0.1), 4) == doctest::Approx(0.1));
}

TEST_CASE("publish_wait: a share of a third of one worker is the stepped run's rule, twice the cost") {
  CHECK(publish_wait(milliseconds(25), milliseconds(40), 1, 1.0 / 3).count() ==
        doctest::Approx(double(nanoseconds(milliseconds(80)).count())).epsilon(1e-9));
  CHECK(publish_wait(milliseconds(100), milliseconds(40), 1, 1.0 / 3) == milliseconds(100));
}

TEST_CASE("publish_wait: edge cases keep the interval or the default share") {
  CHECK(publish_wait(milliseconds(25), milliseconds(60), 0, 0.05) == milliseconds(25));   // no workers
  CHECK(publish_wait(milliseconds(25), milliseconds(60), 20, 0.05) == milliseconds(25));  // a whole core's share
  CHECK(publish_wait(milliseconds(25), milliseconds(60), 2, 0) ==
        publish_wait(milliseconds(25), milliseconds(60), 2, kDefaultPictureShare));
  CHECK(publish_wait(milliseconds(25), std::chrono::hours(2), 2, 0.05) == std::chrono::hours(1));  // capped
}
