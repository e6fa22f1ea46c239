// A stepped run (RunOptions::stepped, the browser's one-thread page): no threads, whole blocks in
// slices its owner asks for, and the same bits as a run on threads.
#include <doctest/doctest.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/formats/result_json.hpp"
#include "core/run/runner.hpp"
#include "helpers.hpp"
#include "random_weights_helpers.hpp"

using namespace maskscope;

namespace {

// Everything a result JSON holds but its timing and thread count.
std::string result_text(const Snapshot& snap) {
  nlohmann::json j = snapshot_to_json(snap);
  j.erase("elapsed_s");
  j.erase("samples_per_s");
  j["config"].erase("threads");
  return j.dump();
}

// Steps `run` at budget 0 (a part of 16 samples a step) until its next block is merged.
void step_block(Run& run) {
  const std::int64_t before = run.samples_done();
  while (run.samples_done() == before && !run.done()) run.step(std::chrono::nanoseconds(0));
}

RunOptions stepped() {
  RunOptions o;
  o.stepped = true;
  return o;
}

}  // namespace

TEST_CASE("a stepped run computes nothing until stepped, in parts of 16 samples at budget 0, and the bits of threads") {
  struct Case {
    const char* name;
    Settings s;
    Simulator::Kernel kernel;
  };
  Settings ln = test::ln_recency(16, 0.5, 9'000);  // blocks of 4096 at n 10: two whole, one partial
  ln.layers = 3;
  ln.rope_base = 100;  // RoPE too
  Settings ln40 = ln;
  ln40.n = 40;
  ln40.samples = 1'000;
  Settings rw = test::random_weights(8, 16, 2, 2, 300);
  std::vector<Case> cases = {{"lanes n 10", ln, Simulator::Kernel::lanes},
                             {"lanes n 40", ln40, Simulator::Kernel::lanes},
                             {"per-sample n 10", ln, Simulator::Kernel::per_sample},
                             {"per-sample n 40", ln40, Simulator::Kernel::per_sample},
                             {"random weights (whole blocks)", rw, Simulator::Kernel::automatic}};
  for (const Case& c : cases) {
    CAPTURE(c.name);
    RunOptions o = stepped();
    o.kernel = c.kernel;
    Run run(c.s, o);
    CHECK(run.stepped());
    CHECK(run.snapshot()->samples_done == 0);
    CHECK(run.samples_done() == 0);  // no thread computes behind the caller's back
    const std::int64_t block = run.grid().block_size;
    REQUIRE(block < c.s.samples);
    const bool whole = c.s.random_weights();
    const std::int64_t parts = whole ? 1 : (block + 15) / 16;  // steps to the first block
    for (std::int64_t k = 1; k < parts; ++k) {
      CHECK_FALSE(run.step(std::chrono::nanoseconds(0)));
      REQUIRE(run.samples_done() == 0);  // a block is merged (and shown) only when complete
    }
    CHECK_FALSE(run.step(std::chrono::nanoseconds(0)));
    CHECK(run.samples_done() == block);
    CHECK(run.snapshot()->samples_done == block);  // the first samples are published at once
    while (!run.step(std::chrono::milliseconds(2))) {}
    CHECK(run.done());
    const auto last = run.snapshot();
    CHECK(last->finished);
    CHECK_FALSE(last->cancelled);
    CHECK(last->samples_done == c.s.samples);
    for (int threads : {1, 3}) {
      CAPTURE(threads);
      Settings t = c.s;
      t.threads = threads;
      RunOptions on_threads;
      on_threads.kernel = c.kernel;
      Run threaded(t, on_threads);
      threaded.wait();
      CHECK(result_text(*threaded.snapshot()) == result_text(*last));
    }
  }
}

TEST_CASE("a stepped run: wait() steps it to the end; step() on a threaded run is refused") {
  Settings s = test::ln_recency(16, 0.5, 2'000);
  Run run(s, stepped());
  run.wait();
  CHECK(run.done());
  CHECK(result_text(*run.snapshot()) == result_text(*run_to_completion(s)));
  Run threaded(s);
  CHECK_THROWS_AS(threaded.step(std::chrono::milliseconds(1)), std::logic_error);
  threaded.wait();
}

TEST_CASE("a stepped run: pause holds it, cancel publishes whole blocks flagged cancelled, abandon lets go") {
  Settings s = test::ln_recency(16, 0.5, 20'000);
  {
    Run run(s, stepped());
    step_block(run);
    run.set_paused(true);
    CHECK_FALSE(run.step(std::chrono::seconds(10)));
    CHECK(run.samples_done() == run.grid().block_size);
    CHECK_THROWS_AS(run.wait(), std::logic_error);  // nobody would ever resume it
    run.set_paused(false);
    step_block(run);
    run.step(std::chrono::nanoseconds(0));  // a part of the third block, which the cancel drops
    run.cancel();
    CHECK(run.done());
    const auto snap = run.snapshot();
    CHECK(snap->cancelled);
    CHECK_FALSE(snap->finished);
    CHECK(snap->samples_done == 2 * run.grid().block_size);
    CHECK(run.step(std::chrono::seconds(1)));  // done: nothing more
    CHECK(run.snapshot()->samples_done == 2 * run.grid().block_size);
  }
  Run run(s, stepped());
  step_block(run);
  run.abandon();
  CHECK(run.done());
  CHECK(run.snapshot()->samples_done == 0);  // the settings-only picture: its sums are gone
}

TEST_CASE("step_runs steps every stepped run that is not paused, and lets finished ones go") {
  Settings s = test::ln_recency(16, 0.5, 10'000);  // 3 blocks
  Run a(s, stepped());
  Run b(s, stepped());
  RunOptions paused = stepped();
  paused.start_paused = true;
  Run c(s, paused);
  while (a.samples_done() == 0) step_runs(std::chrono::nanoseconds(0));
  CHECK(a.samples_done() == a.grid().block_size);
  CHECK(b.samples_done() == b.grid().block_size);  // stepped alike
  CHECK(c.samples_done() == 0);
  while (!a.done() || !b.done()) step_runs(std::chrono::milliseconds(5));
  CHECK(c.samples_done() == 0);
  CHECK(result_text(*a.snapshot()) == result_text(*b.snapshot()));
  c.set_paused(false);
  while (!c.done()) step_runs(std::chrono::milliseconds(5));
  CHECK(result_text(*c.snapshot()) == result_text(*a.snapshot()));
}
