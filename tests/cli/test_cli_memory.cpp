// Every subcommand goes through the one memory estimate (core/run/resources.hpp) and MASKSCOPE_MEMORY_LIMIT:
// settings that cannot fit are refused with exit 2 and the estimate in the message, before anything is
// allocated; none ends in SIGABRT (docs/cli.md, "Memory").
#include <doctest/doctest.h>

#include <string>

#include "cli_test_helpers.hpp"

using namespace cli_test;

namespace {

// 8 GB: a fixed network with a vocabulary of 10^9 (238 GB with d 64) never fits, whatever the machine.
const std::string kLimit = "MASKSCOPE_MEMORY_LIMIT=8000000000";
const std::string kHuge = "--model random_weights --weights fixed --vocab 1000000000";

void refused(const Result& r, const std::string& what) {
  INFO(what << ": exit " << r.code << ", stderr: " << r.err);
  CHECK(r.code == 2);
  CHECK((r.err.find("needs about") != std::string::npos || r.err.find("need about") != std::string::npos));
  CHECK(r.err.find("available") != std::string::npos);
}

}  // namespace

TEST_CASE("run, sweep, probe and leakage refuse a fixed network that does not fit (embedding table counted)") {
  refused(cli_env(kLimit, "run " + kHuge + " --quiet"), "run");
  refused(cli_env(kLimit, "sweep " + kHuge + " --vary n=4,5 --quiet"), "sweep");
  // Before: SIGABRT with no message (the estimate left out the embedding table; bad_alloc past a thread).
  refused(cli_env(kLimit, "probe " + kHuge + " --quiet"), "probe");
  refused(cli_env(kLimit, "probe --model random_weights --weights fixed --d 64 --vocab 100000000 --quiet"),
          "probe d 64");
  // Before: an uncaught std::bad_alloc (SIGABRT); leakage had no memory check at all.
  refused(cli_env(kLimit, "leakage " + kHuge + " --quiet"), "leakage");
  const Result r = cli_env(kLimit, "probe " + kHuge + " --quiet");
  CHECK(r.err.find("embedding table") != std::string::npos);
}

TEST_CASE("MASKSCOPE_MEMORY_LIMIT caps leakage, analyze, merge and bench too") {
  const std::string tiny = "MASKSCOPE_MEMORY_LIMIT=1000";
  refused(cli_env(tiny, "leakage --n 8 --samples 10 --quiet"), "leakage");
  const std::string dir = work("memory_tensors");
  fs::remove_all(dir);
  REQUIRE(cli("run --n 6 --d 8 --samples 4 --quiet --save-tensors " + dir + " --out " + work("memory_run.json")).code ==
          0);
  refused(cli_env(tiny, "analyze " + dir + " --quiet"), "analyze");
  REQUIRE(cli("run --n 6 --d 8 --samples 40 --quiet --shard 1/1 --out " + work("memory_part.msum")).code == 0);
  refused(cli_env(tiny, "merge " + work("memory_part.msum")), "merge");
  CHECK(cli("merge " + work("memory_part.msum") + " --out " + work("memory_merged.json")).code == 0);
  refused(cli_env(tiny, "bench --seconds 0.01"), "bench");
}
