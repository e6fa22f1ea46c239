// Where maskscope-cli writes (core/formats/atomic_file.hpp): a link planted at the old predictable
// temporary name is not followed, and of two runs writing one --out at the same time one says that the
// other got there first instead of both reporting success over a lost result.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>

#include "cli_test_helpers.hpp"

using namespace cli_test;

TEST_CASE("run --out: a link planted at the temporary's old name is not followed") {
  const fs::path dir = work("planted");
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path victim = dir / "victim.txt";
  { std::ofstream(victim) << "precious"; }
  fs::create_symlink(victim, dir / ".result.json.maskscope-tmp");
  const Result r = cli("run --samples 200 --threads 1 --out " + (dir / "result.json").string());
  REQUIRE(r.code == 0);
  CHECK(slurp(victim.string()) == "precious");
  CHECK(fs::is_regular_file(fs::symlink_status(dir / "result.json")));
  CHECK(read_json((dir / "result.json").string())["config"]["samples"] == 200);
  // A link at --out itself is refused before computing.
  fs::create_symlink(victim, dir / "link.json");
  const Result l = cli("run --samples 200 --threads 1 --out " + (dir / "link.json").string());
  CHECK(l.code == 2);
  CHECK(l.err.find("not a regular file") != std::string::npos);
  CHECK(slurp(victim.string()) == "precious");
  fs::remove_all(dir);
}

TEST_CASE("two runs writing one --out at once: one writes, the other says so and exits non-zero") {
  const fs::path dir = work("two_writers");
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string out = (dir / "result.json").string();
  // Both start before either finishes: each computes for about a second on this build (calibrated on a
  // short run: an optimized build needs some 10^5 samples, a sanitizer build a few 10^3), so the second to
  // finish finds the first one's file where its check saw none.
  const auto t0 = std::chrono::steady_clock::now();
  REQUIRE(cli("run --n 16 --samples 5000 --threads 1 --out " + (dir / "calibrate.json").string()).code == 0);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const long samples = std::clamp(long(5000 / std::max(seconds, 1e-3)), 5000L, 2'000'000L);
  std::string run(MASKSCOPE_CLI);
  run += " run --n 16 --samples " + std::to_string(samples) + " --threads 1 --out ";
  run += out;
  std::string cmd = "bash -c 'cd ";
  cmd += dir.string();
  cmd += "; (" + run + " 2>a.err; echo $? >a.code) & (" + run + " 2>b.err; echo $? >b.code) & wait'";
  REQUIRE(std::system(cmd.c_str()) == 0);
  const std::string a = slurp((dir / "a.code").string()), b = slurp((dir / "b.code").string());
  const std::string errors = slurp((dir / "a.err").string()) + slurp((dir / "b.err").string());
  CHECK(((a == "0\n" && b == "1\n") || (a == "1\n" && b == "0\n")));
  CHECK(errors.find("another writer") != std::string::npos);
  CHECK(read_json(out)["config"]["samples"] == samples);
  int temporaries = 0;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().find(".maskscope-tmp") != std::string::npos) ++temporaries;
  CHECK(temporaries == 0);
  fs::remove_all(dir);
}
