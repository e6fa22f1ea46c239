// Scale-out through maskscope-cli: shards (.msum) merged in any order and MPI ranks give one run's numbers
// bit for bit; merge refuses mismatched, overlapping, missing, corrupt and truncated parts (docs/scale-out.md).
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <unistd.h>
#include <utility>
#include <vector>

#include "cli_test_helpers.hpp"

using namespace cli_test;

namespace {

const std::string kShardRun = "run --n 12 --d 32 --layers 2 --alpha 0.5 --samples 150000 --seed 3 --quiet";

}  // namespace

TEST_CASE("shards merged in any order give the same numbers as one run, bit for bit") {
  REQUIRE(cli(kShardRun + " --threads 2 --out " + work("whole.json")).code == 0);
  for (int k = 1; k <= 3; ++k)
    REQUIRE(cli(kShardRun + " --threads " + std::to_string(k) + " --shard " + std::to_string(k) + "/3 --out " +
                work("part-" + std::to_string(k) + ".msum"))
                .code == 0);
  const nlohmann::json whole = numbers(read_json(work("whole.json")));
  for (const std::string order : {"1 2 3", "3 1 2", "2 3 1"}) {
    std::string files;
    for (char c : order)
      if (c != ' ') files += work(std::string("part-") + c + ".msum") + " ";
    const Result r = cli("merge " + files + "--out " + work("merged.json"));
    INFO(r.err);
    REQUIRE(r.code == 0);
    const nlohmann::json merged = numbers(read_json(work("merged.json")));
    CHECK(merged["samples"] == 150000);
    CHECK(merged["finished"] == true);
    CHECK(merged == whole);  // every number, as JSON text: the same bits
  }
  // In stages: 1 and 2 into one .msum (a contiguous part), then with 3.
  REQUIRE(cli("merge " + work("part-2.msum") + " " + work("part-1.msum") + " --out " + work("part-12.msum")).code == 0);
  REQUIRE(cli("merge " + work("part-12.msum") + " " + work("part-3.msum") + " --out " + work("staged.json")).code == 0);
  CHECK(numbers(read_json(work("staged.json"))) == whole);
  // A whole run written as sums merges alone into the same result.
  REQUIRE(cli(kShardRun + " --out " + work("all.msum")).code == 0);
  REQUIRE(cli("merge " + work("all.msum")).code == 0);
}

TEST_CASE("merge refuses mismatched settings, overlaps, gaps, corrupt and truncated files, naming the file; exit 2") {
  for (int k = 1; k <= 3; ++k)
    if (!fs::exists(work("part-" + std::to_string(k) + ".msum")))
      REQUIRE(
          cli(kShardRun + " --shard " + std::to_string(k) + "/3 --out " + work("part-" + std::to_string(k) + ".msum"))
              .code == 0);
  const std::string p1 = work("part-1.msum"), p2 = work("part-2.msum"), p3 = work("part-3.msum");
  REQUIRE(cli("run --n 12 --d 32 --layers 2 --alpha 0.5 --samples 150000 --seed 4 --quiet --shard 2/3 --out " +
              work("seed4.msum"))
              .code == 0);
  {  // truncated, and one flipped byte
    std::ifstream is(p2, std::ios::binary);
    std::string data(std::istreambuf_iterator<char>(is), {});
    std::ofstream(work("trunc.msum"), std::ios::binary) << data.substr(0, data.size() / 2);
    data[data.size() / 2] ^= 0x10;
    std::ofstream(work("flip.msum"), std::ios::binary) << data;
    std::ofstream(work("text.msum")) << "{\"not\": \"sums\"}\n";
    // The same shard as if computed on a processor of another kind (its kernel rounds differently).
    std::ifstream is2(p2, std::ios::binary);
    std::string other(std::istreambuf_iterator<char>(is2), {});
    const std::size_t at = other.find("\"kernel\":\"");
    REQUIRE(at != std::string::npos);
    other.replace(at, other.find('"', at + 10) - at + 1, "\"kernel\":\"per-sample elsewhere\"");
    std::ofstream(work("kernel.msum"), std::ios::binary) << other;
  }
  struct Case {
    std::string files, message, named;
  };
  const Case cases[] = {
      {p1 + " " + work("seed4.msum") + " " + p3, "different settings", "seed4.msum"},
      {p1 + " " + work("kernel.msum") + " " + p3, "processors of one kind", "kernel.msum"},
      {p1 + " " + p2 + " " + p2 + " " + p3, "overlaps", "part-2.msum"},
      {p1 + " " + p3, "missing samples", "part-1.msum"},
      {p1 + " " + p2, "missing samples", ""},
      {p1 + " " + work("trunc.msum") + " " + p3, "truncated", "trunc.msum"},
      {p1 + " " + work("flip.msum") + " " + p3, "checksum", "flip.msum"},
      {work("text.msum"), "not a maskscope partial-sums file", "text.msum"},
      {work("absent.msum"), "cannot be opened", "absent.msum"},
  };
  for (const Case& c : cases) {
    fs::remove(work("refused.json"));
    const Result r = cli("merge " + c.files + " --out " + work("refused.json"));
    INFO(c.files);
    INFO(r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find(c.message) != std::string::npos);
    CHECK(r.err.find(c.named) != std::string::npos);
    CHECK_FALSE(fs::exists(work("refused.json")));
  }
  // --shard's own refusals.
  for (const auto& [args, message] :
       std::vector<std::pair<std::string, std::string>>{{"--shard 2/3 --out " + work("x.json"), "--out FILE.msum"},
                                                        {"--shard 4/3 --out " + work("x.msum"), "K in [1, N]"},
                                                        {"--shard 0/3 --out " + work("x.msum"), "K = 0"},
                                                        {"--shard 2 --out " + work("x.msum"), "is not K/N"},
                                                        {"--shard 1/100000 --out " + work("x.msum"), "segments"}}) {
    const Result r = cli(kShardRun + " " + args);
    INFO(args);
    INFO(r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find("--shard") != std::string::npos);
    CHECK(r.err.find(message) != std::string::npos);
  }
}

#if MASKSCOPE_TEST_MPI

TEST_CASE("mpirun with 1, 2 and 3 ranks gives the plain run's numbers, bit for bit") {
  REQUIRE(cli(kShardRun + " --threads 2 --out " + work("whole.json")).code == 0);
  const nlohmann::json whole = numbers(read_json(work("whole.json")));
  for (int P : {1, 2, 3}) {
    fs::remove(work("mpi.json"));
    const Result r = mpirun(P, kShardRun + " --threads 1 --out " + work("mpi.json"));
    INFO("P = " << P << ": " << r.err);
    REQUIRE(r.code == 0);
    const nlohmann::json j = read_json(work("mpi.json"));
    if (P > 1) CHECK(j["mpi_ranks"] == P);
    CHECK(numbers(j) == whole);
  }
}

TEST_CASE("mpirun: a killed rank ends the job without a result; invalid flags exit 2 on every rank") {
  fs::remove(work("killed.json"));
  const Result r = mpirun(2, "run --n 12 --d 32 --samples 100000000 --quiet --threads 1 --out " + work("killed.json"),
                          "MASKSCOPE_TEST_KILL_RANK=1");
  CHECK(r.code != 0);
  CHECK_FALSE(fs::exists(work("killed.json")));
  // Ranks on processors of different kinds (simulated on rank 1): refused before computing.
  const Result mixed = mpirun(2, "run --n 12 --d 32 --samples 100000 --quiet --threads 1 --out " + work("killed.json"),
                              "MASKSCOPE_TEST_KERNEL_RANK=1");
  CHECK(mixed.code != 0);
  CHECK(mixed.err.find("different kernels") != std::string::npos);
  CHECK_FALSE(fs::exists(work("killed.json")));
  const Result bad = mpirun(2, "run --n 0 --quiet --out " + work("killed.json"));
  CHECK(bad.code == 2);
  CHECK(bad.err.find("--n") != std::string::npos);
  CHECK_FALSE(fs::exists(work("killed.json")));
}
#endif
