// A sweep split by points (docs/scale-out.md): shards (.msweep) joined by merge in any order, and mpirun's
// ranks, give one process's JSON (but for elapsed_s) and CSV byte for byte, parameter-free and random-weight;
// merge and --shard refuse what cannot be one sweep (exit 2, the file or flag named, nothing written).
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cinttypes>
#include <cstdio>
#include <sstream>
#include <string>
#include <unistd.h>
#include <utility>
#include <vector>

#include "cli_test_helpers.hpp"
#include "core/model/checksum.hpp"

using namespace cli_test;

namespace {

// 15 points, stopped early at different stages; and a random-weight sweep of 3.
const std::string kPfSweep =
    "sweep --quiet --vary alpha=0:1:5 --vary d=4:64:3log --n 6 --layers 2 --samples 3000 --se 0.01 "
    "--metric sink_weight --threads 2";
const std::string kRwSweep =
    "sweep --quiet --model random_weights --vary init-std=0.02,0.1,1 --n 5 --d 8 --heads 2 --layers 2 "
    "--samples 20000 --metric adjacency --se 0.02 --threads 2";

// A sweep file's text without its elapsed_s line, the one timing field.
std::string without_timing(const std::string& text) {
  std::istringstream is(text);
  std::string line, out;
  int timing = 0;
  while (std::getline(is, line))
    if (line.rfind(" \"elapsed_s\": ", 0) == 0) ++timing;
    else out += line + "\n";
  CHECK(timing == 1);
  return out;
}

// A .msweep's JSON line, and a JSON object written back as a .msweep with a checksum that matches it (so that
// merge must find what is wrong from the content itself).
nlohmann::json shard_json(const std::string& path) {
  const std::string text = slurp(path);
  return nlohmann::json::parse(text.substr(0, text.find('\n')));
}
void write_sealed(const std::string& path, const nlohmann::json& j) {
  const std::string body = j.dump() + "\n";
  char line[40];
  std::snprintf(line, sizeof line, "fnv1a64 %016" PRIx64 "\n", maskscope::fnv1a64(body));
  std::ofstream(path, std::ios::binary) << body << line;
}

// Shards 1..3 of 3 of kPfSweep, computed once for the cases that need them.
void make_pf_shards() {
  for (int k = 1; k <= 3; ++k)
    if (!fs::exists(work("pf-" + std::to_string(k) + ".msweep")))
      REQUIRE(
          cli(kPfSweep + " --shard " + std::to_string(k) + "/3 --out " + work("pf-" + std::to_string(k) + ".msweep"))
              .code == 0);
}

std::string shard_files(const std::string& name, const std::string& order) {
  std::string files;
  for (char k : order) files += work(name + "-" + k + ".msweep") + " ";
  return files;
}

}  // namespace

TEST_CASE("sweep shards merged in any order give one process's file and CSV, byte for byte") {
  for (const auto& [sweep, name] : {std::pair{kPfSweep, std::string("pf")}, std::pair{kRwSweep, std::string("rw")}}) {
    INFO(name);
    REQUIRE(cli(sweep + " --out " + work(name + "-whole.json")).code == 0);
    REQUIRE(cli(sweep + " --out " + work(name + "-whole.csv")).code == 0);
    for (int k = 1; k <= 3; ++k) {
      const Result r =
          cli(sweep + " --shard " + std::to_string(k) + "/3 --out " + work(name + "-" + std::to_string(k) + ".msweep"));
      REQUIRE_MESSAGE(r.code == 0, r.err);
    }
    const std::string whole = slurp(work(name + "-whole.json"));
    for (const std::string order : {"312", "231"}) {
      Result r = cli("merge " + shard_files(name, order) + "--out " + work(name + "-merged.json"));
      REQUIRE_MESSAGE(r.code == 0, r.err);
      CHECK(without_timing(slurp(work(name + "-merged.json"))) == without_timing(whole));
      r = cli("merge " + shard_files(name, order) + "--out " + work(name + "-merged.csv"));
      REQUIRE_MESSAGE(r.code == 0, r.err);
      CHECK(slurp(work(name + "-merged.csv")) == slurp(work(name + "-whole.csv")));
    }
    // The merged file's elapsed_s is the shards' sum.
    CHECK(read_json(work(name + "-merged.json"))["elapsed_s"].get<double>() > 0);
    // A whole sweep written as one shard (--out FILE.msweep without --shard) merges alone into the same file.
    REQUIRE(cli(sweep + " --out " + work(name + "-all.msweep")).code == 0);
    REQUIRE(cli("merge " + work(name + "-all.msweep") + " --out " + work(name + "-alone.json")).code == 0);
    CHECK(without_timing(slurp(work(name + "-alone.json"))) == without_timing(whole));
  }
  // The sweep is not trivial: its points stopped at different sample counts.
  const nlohmann::json j = read_json(work("pf-whole.json"));
  CHECK(j["points"][0]["samples"] != j["points"][14]["samples"]);
}

TEST_CASE("merge refuses sweep shards that are not one sweep, naming the file; exit 2, nothing written") {
  for (int k = 1; k <= 3; ++k)
    if (!fs::exists(work("pf-" + std::to_string(k) + ".msweep")))
      REQUIRE(
          cli(kPfSweep + " --shard " + std::to_string(k) + "/3 --out " + work("pf-" + std::to_string(k) + ".msweep"))
              .code == 0);
  const std::string p1 = work("pf-1.msweep"), p2 = work("pf-2.msweep"), p3 = work("pf-3.msweep");
  REQUIRE(cli(kPfSweep + " --seed 9 --shard 2/3 --out " + work("seed9.msweep")).code == 0);
  REQUIRE(cli(kPfSweep + " --shard 2/4 --out " + work("of4.msweep")).code == 0);
  REQUIRE(cli("run --quiet --n 6 --d 8 --samples 100 --out " + work("run.msum")).code == 0);
  {
    const std::string text = slurp(p2);
    std::ofstream(work("trunc.msweep"), std::ios::binary) << text.substr(0, text.size() / 2);
    std::ofstream(work("text.msweep")) << "{\"not\": \"a shard\"}\n";
  }
  struct Case {
    std::string files, message, named;
  };
  const Case cases[] = {
      {p1 + " " + p3, "missing shard 2/3", ""},
      {p1 + " " + p2 + " " + p2 + " " + p3, "a shard given twice", "pf-2.msweep"},
      {p1 + " " + work("seed9.msweep") + " " + p3, "a different sweep", "seed 9"},
      {p1 + " " + work("of4.msweep") + " " + p3, "K/N of one N", "of4.msweep"},
      {p1 + " " + work("trunc.msweep") + " " + p3, "truncated", "trunc.msweep"},
      {work("text.msweep"), "not a maskscope sweep shard", "text.msweep"},
      {work("absent.msweep"), "does not exist", "absent.msweep"},
      {p1 + " " + work("run.msum"), "merge the parts of one run (.msum) or of one sweep", "run.msum"},
  };
  for (const Case& c : cases) {
    fs::remove(work("refused.json"));
    const Result r = cli("merge " + c.files + " --out " + work("refused.json"));
    INFO(c.files);
    INFO(r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find("merge refused") != std::string::npos);
    CHECK(r.err.find(c.message) != std::string::npos);
    CHECK(r.err.find(c.named) != std::string::npos);
    CHECK_FALSE(fs::exists(work("refused.json")));
  }
  const Result r = cli("merge " + p1 + " " + p2 + " " + p3 + " --out " + work("refused.msum"));
  CHECK(r.code == 2);
  CHECK(r.err.find("--out") != std::string::npos);
  CHECK_FALSE(fs::exists(work("refused.msum")));
}

TEST_CASE("merge refuses a sweep shard with any one of 40 bits flipped (its FNV-1a 64 checksum); exit 2") {
  make_pf_shards();
  const std::string p1 = work("pf-1.msweep"), p3 = work("pf-3.msweep");
  const std::string text = slurp(work("pf-2.msweep"));
  REQUIRE(text.size() > 1000);
  REQUIRE(cli("merge " + p1 + " " + work("pf-2.msweep") + " " + p3 + " --out " + work("flip.json")).code == 0);
  int refused = 0;
  for (std::size_t f = 0; f < 40; ++f) {
    // Spread over the whole file, the checksum line included; each a different bit of its byte.
    const std::size_t at = f * (text.size() - 1) / 39;
    std::string flipped = text;
    flipped[at] = char(flipped[at] ^ (1 << (f % 8)));
    std::ofstream(work("flipped.msweep"), std::ios::binary) << flipped;
    fs::remove(work("flip.json"));
    const Result r = cli("merge " + p1 + " " + work("flipped.msweep") + " " + p3 + " --out " + work("flip.json"));
    INFO("byte " << at << " bit " << f % 8 << ": " << r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find("flipped.msweep") != std::string::npos);
    CHECK_FALSE(fs::exists(work("flip.json")));
    refused += r.code == 2;
  }
  CHECK(refused == 40);
}

TEST_CASE("merge refuses a sweep shard whose points are not its sweep's, even with a matching checksum; exit 2") {
  make_pf_shards();
  const std::string p1 = work("pf-1.msweep"), p2 = work("pf-2.msweep"), p3 = work("pf-3.msweep");
  const nlohmann::json good = shard_json(p2);
  REQUIRE(good["points"].size() >= 2);
  using Edit = void (*)(nlohmann::json&);
  const std::vector<std::pair<Edit, std::string>> cases = {
      // A point's settings (and numbers) swapped for another point's.
      {[](nlohmann::json& j) { std::swap(j["points"][0]["point"], j["points"][1]["point"]); },
       "its settings are not those of point 1 of the sweep"},
      {[](nlohmann::json& j) { j["points"][0]["point"]["settings"]["alpha"] = 0.9; },
       "its settings are not those of point 1"},
      {[](nlohmann::json& j) { j["points"][0]["index"] = 1e30; }, "is not an integer"},
      {[](nlohmann::json& j) { j["points"][0]["index"] = 4.0; }, "is not an integer"},
      {[](nlohmann::json& j) { j["points"][0]["index"] = 1000; }, "out of range"},
      {[](nlohmann::json& j) { j["points"][0]["index"] = 3; }, "point 3 is not one of shard 2/3's"},
      {[](nlohmann::json& j) { j["elapsed_s"] = -1e308; }, "elapsed_s: -1e+308; valid: a finite number"},
      {[](nlohmann::json& j) { j["points"][0]["values"][0] = "0\x1b[31m,5"; }, "\\x1b[31m,5' holds control"},
      {[](nlohmann::json& j) { j["points"][0]["values"][0] = "0.75"; }, "its value of alpha '0.75'"},
      {[](nlohmann::json& j) { j["points"][0]["point"]["samples"] = 3001; }, "out of range"},
      {[](nlohmann::json& j) { j["sweep"]["vary"][0]["values"][0] = 0.1; }, "its settings are not those of point"},
      {[](nlohmann::json& j) { j["sweep"]["points"] = 16; }, "not what its own spec gives (points)"},
      {[](nlohmann::json& j) {
         j["shard"] = {2, 1e30};
       },
       "shard N"},
  };
  for (const auto& [edit, message] : cases) {
    nlohmann::json j = good;
    edit(j);
    write_sealed(work("edited-2.msweep"), j);
    fs::remove(work("edited.json"));
    const Result r = cli("merge " + p1 + " " + work("edited-2.msweep") + " " + p3 + " --out " + work("edited.json"));
    INFO(message);
    INFO(r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find("edited-2.msweep") != std::string::npos);
    CHECK(r.err.find(message) != std::string::npos);
    CHECK(r.err.find('\x1b') == std::string::npos);
    CHECK_FALSE(fs::exists(work("edited.json")));
  }
  // The unedited shard, sealed the same way, merges: the refusals are the edits'.
  write_sealed(work("edited-2.msweep"), good);
  const Result r = cli("merge " + p1 + " " + work("edited-2.msweep") + " " + p3 + " --out " + work("edited.json"));
  CHECK_MESSAGE(r.code == 0, r.err);
  // A shard of layout 1 (no checksum line) is refused, naming the version that wrote it.
  nlohmann::json old = good;
  old["maskscope_sweep_shard"] = 1;
  std::ofstream(work("old-2.msweep"), std::ios::binary) << old.dump() << "\n";
  const Result o = cli("merge " + p1 + " " + work("old-2.msweep") + " " + p3 + " --out " + work("old.json"));
  CHECK(o.code == 2);
  CHECK(o.err.find("a sweep shard of layout 1, written by maskscope " +
                   good["sweep"]["maskscope_version"].get<std::string>()) != std::string::npos);
  CHECK(o.err.find("compute the shard again") != std::string::npos);
}

TEST_CASE("sweep --shard refuses what is not shard K of N <= points, or not written to FILE.msweep; exit 2") {
  for (const auto& [args, message] : std::vector<std::pair<std::string, std::string>>{
           {"--shard 2/3 --out " + work("never.json"), "--out FILE.msweep"},
           {"--shard 4/3 --out " + work("never.msweep"), "K in [1, N]"},
           {"--shard 0/3 --out " + work("never.msweep"), "K = 0"},
           {"--shard 2 --out " + work("never.msweep"), "is not K/N"},
           {"--shard 1/16 --out " + work("never.msweep"), "valid: N in [1, 15]"}}) {
    fs::remove(work("never.json"));
    fs::remove(work("never.msweep"));
    const Result r = cli(kPfSweep + " " + args);
    INFO(args);
    INFO(r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find("--shard") != std::string::npos);
    CHECK(r.err.find(message) != std::string::npos);
    CHECK_FALSE(fs::exists(work("never.json")));
    CHECK_FALSE(fs::exists(work("never.msweep")));
  }
}

#if MASKSCOPE_TEST_MPI

TEST_CASE("mpirun -np 2 and 3 split a sweep by points and give one process's file and CSV, byte for byte") {
  for (const auto& [sweep, name] : {std::pair{kPfSweep, std::string("pf")}, std::pair{kRwSweep, std::string("rw")}}) {
    if (!fs::exists(work(name + "-whole.json"))) REQUIRE(cli(sweep + " --out " + work(name + "-whole.json")).code == 0);
    if (!fs::exists(work(name + "-whole.csv"))) REQUIRE(cli(sweep + " --out " + work(name + "-whole.csv")).code == 0);
    for (int P : {2, 3}) {
      INFO(name << ", P = " << P);
      fs::remove(work("mpi.json"));
      Result r = mpirun(P, sweep + " --out " + work("mpi.json"));
      REQUIRE_MESSAGE(r.code == 0, r.err);
      CHECK(without_timing(slurp(work("mpi.json"))) == without_timing(slurp(work(name + "-whole.json"))));
      r = mpirun(P, sweep + " --out " + work("mpi.csv"));
      REQUIRE_MESSAGE(r.code == 0, r.err);
      CHECK(slurp(work("mpi.csv")) == slurp(work(name + "-whole.csv")));
    }
  }
  // A shard computed by two ranks joins the shards computed alone.
  REQUIRE(mpirun(2, kPfSweep + " --shard 2/3 --out " + work("mpi-2.msweep")).code == 0);
  for (int k : {1, 3})
    if (!fs::exists(work("pf-" + std::to_string(k) + ".msweep")))
      REQUIRE(
          cli(kPfSweep + " --shard " + std::to_string(k) + "/3 --out " + work("pf-" + std::to_string(k) + ".msweep"))
              .code == 0);
  REQUIRE(cli("merge " + work("pf-1.msweep") + " " + work("mpi-2.msweep") + " " + work("pf-3.msweep") + " --out " +
              work("mpi-merged.json"))
              .code == 0);
  CHECK(without_timing(slurp(work("mpi-merged.json"))) == without_timing(slurp(work("pf-whole.json"))));
}

TEST_CASE("mpirun sweep: ranks of different kernels and invalid flags are refused before computing") {
  fs::remove(work("mpi-refused.json"));
  const Result mixed = mpirun(2, kPfSweep + " --out " + work("mpi-refused.json"), "MASKSCOPE_TEST_KERNEL_RANK=1");
  CHECK(mixed.code != 0);
  CHECK(mixed.err.find("different kernels") != std::string::npos);
  CHECK_FALSE(fs::exists(work("mpi-refused.json")));
  const Result bad = mpirun(2, kPfSweep + " --vary n=0,1 --out " + work("mpi-refused.json"));
  CHECK(bad.code == 2);
  CHECK(bad.err.find("--vary") != std::string::npos);
  CHECK_FALSE(fs::exists(work("mpi-refused.json")));
}
#endif
