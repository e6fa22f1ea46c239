// maskscope-cli refuses invalid input before computing: exit code 2, every bad flag named with its valid
// range, and no output file written (issue 9's parsing table, unwritable destinations, memory).
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <utility>

#include "cli_test_helpers.hpp"

using namespace cli_test;

TEST_CASE("every invalid flag: exit code 2, the flag named, no output file") {
  const std::string path = work("never.json");
  const char* cases[][2] = {
      {"--n 0", "--n"},
      {"--n 513", "--n"},
      {"--n ten", "--n"},
      {"--d 0", "--d"},
      {"--d 70000", "--d"},
      {"--layers 0", "--layers"},
      {"--layers 49", "--layers"},
      {"--alpha -0.1", "--alpha"},
      {"--alpha 1.5", "--alpha"},
      {"--alpha nan", "--alpha"},
      {"--norm batch", "--norm"},
      {"--scale two", "--scale"},
      {"--gamma 2", "--gamma"},
      {"--rope -1", "--rope"},
      {"--rope 0.5", "--rope"},
      {"--d 15 --rope 10000", "--rope"},
      {"--mask diagonal", "--mask"},
      {"--mask window:0", "--mask"},
      {"--mask window:99", "--mask"},
      {"--samples 0", "--samples"},
      {"--threads -2", "--threads"},
      {"--unit-input 7", "--unit-input"},
      {"--bogus 1", "--bogus"},
  };
  for (const auto& c : cases) {
    fs::remove(path);
    INFO(std::string(c[0]));
    const Result r = cli(std::string("run --quiet --samples 10 ") + c[0] + " --out " + path);
    CHECK(r.code == 2);
    CHECK(r.err.find(c[1]) != std::string::npos);
    CHECK_FALSE(fs::exists(path));
  }
  // Several bad flags are all reported at once.
  const Result r = cli("run --n 0 --alpha 3 --norm x --out " + path);
  CHECK(r.code == 2);
  for (const char* flag : {"--n", "--alpha", "--norm"}) CHECK(r.err.find(flag) != std::string::npos);
  CHECK(cli("theory --kind nope").code == 2);
  CHECK(cli("theory --kind h_of_j --alpha 2").code == 2);
  CHECK(cli("").code == 2);
}

TEST_CASE("random_weights: every invalid flag or combination exits 2 naming the flag") {
  const std::string path = work("never.json");
  const std::string rw = "--model random_weights ";
  const std::pair<std::string, const char*> cases[] = {
      {rw + "--d 30 --heads 4", "--heads"},
      {rw + "--heads 0", "--heads"},
      {rw + "--heads 65", "--heads"},
      {rw + "--vocab 0", "--vocab"},
      {rw + "--init-std -0.1", "--init-std"},
      {rw + "--embed-std -1", "--embed-std"},
      {rw + "--init-mean 1e9", "--init-mean"},
      {rw + "--weights sometimes", "--weights"},
      {rw + "--mlp 2", "--mlp"},
      {rw + "--d 8192", "--d"},
      {rw + "--d 30 --heads 6 --rope 10000", "--rope"},
      {rw + "--weight-seed -1", "--weight-seed"},
      {rw + "--alpha 0.5", "--alpha"},
      {rw + "--scale one", "--scale"},
      {rw + "--unit-input 1", "--unit-input"},
      {"--model bogus", "--model"},
      {"--heads 2", "--heads"},
      {"--vocab 8", "--vocab"},
      {"--init-std 0.1", "--init-std"},
      {"--weights fixed", "--weights"},
  };
  for (const auto& [args, flag] : cases) {
    fs::remove(path);
    INFO(args);
    const Result r = cli("run --quiet --samples 10 " + args + " --out " + path);
    CHECK(r.code == 2);
    CHECK(r.err.find(flag) != std::string::npos);
    CHECK_FALSE(fs::exists(path));
  }
  // --pos-std is the learned position table's std: without learned positions it would be ignored.
  fs::remove(path);
  Result r = cli("run --quiet --samples 10 " + rw + "--pos-std 0.5 --out " + path);
  CHECK(r.code == 2);
  CHECK(r.err.find("--pos-std: pos_std is the std of the learned position table, and pos_embedding is none; valid: "
                   "pos_std with pos_embedding learned, or no pos_std") != std::string::npos);
  CHECK_FALSE(fs::exists(path));
  r = cli("run --quiet --samples 10 " + rw + "--n 4 --d 8 --pos-embedding learned --pos-std 0.5 --out " + path);
  CHECK_MESSAGE(r.code == 0, r.err);
}

TEST_CASE("issue 9's parsing table: decimal only, empty is an error, no wrapping, no flag taken as a value") {
  const std::string path = work("never2.json");
  // {arguments, flag that must be named, text the message must contain}
  const char* cases[][3] = {
      {"--alpha ''", "--alpha", "empty"},
      {"--gamma ''", "--gamma", "empty"},
      {"--rope ''", "--rope", "empty"},
      {"--unit-input ''", "--unit-input", "valid: 0, 1"},
      {"--seed ''", "--seed", "empty"},
      {"--threads ''", "--threads", "empty"},
      {"--n ''", "--n", "empty"},
      {"--n 0x10", "--n", "not a decimal number"},
      {"--n 10.7", "--n", "not a whole number"},
      {"--seed -1", "--seed", "[0, 18446744073709551615]"},
      {"--seed 18446744073709551616", "--seed", "18446744073709551616 is out of range"},
      {"--seed 1180591620717411303424", "--seed", "1180591620717411303424 is out of range"},  // 2^70: digits
      {"--threads 4294967297", "--threads", "[0, 256]"},
      {"--n 4294967306", "--n", "[1, 512]"},
      {"--alpha inf", "--alpha", "not a decimal number"},
      {"--alpha ' 0.5'", "--alpha", "not a decimal number"},
      {"--unit-input 2", "--unit-input", "valid: 0, 1"},
      {"--out --quiet", "--out", "got the flag"},
  };
  for (const auto& c : cases) {
    fs::remove(path);
    INFO(std::string(c[0]));
    const Result r =
        cli(std::string("run --samples 10 ") + c[0] + (std::string(c[1]) == "--out" ? "" : " --quiet --out " + path));
    CHECK(r.code == 2);
    CHECK(r.err.find(c[1]) != std::string::npos);
    CHECK(r.err.find(c[2]) != std::string::npos);
    CHECK_FALSE(fs::exists(path));
    CHECK_FALSE(fs::exists("--quiet"));
  }
  CHECK(cli("run --samples 10 --quiet=2 --out " + path).code == 2);
  // Every bad flag is named, each with its range.
  const Result all = cli("run --n abc --d 0 --alpha 2 --out " + path);
  CHECK(all.code == 2);
  for (const char* text :
       {"--n: 'abc' is not a decimal number", "--d: 0 is out of range; valid: whole number in [1, 65536]",
        "--alpha: 2 is out of range; valid: number in [0, 1]"})
    CHECK(all.err.find(text) != std::string::npos);
  // Decimal: 010 is ten (never octal).
  const Result ten = cli("run --n 010 --layers 1 --samples 10 --quiet");
  REQUIRE(ten.code == 0);
  CHECK(nlohmann::json::parse(ten.out)["config"]["n"] == 10);
  CHECK(cli("theory --kind h_of_j --alpha ''").code == 2);
  CHECK(cli("theory --kind h_of_j --n 0x10").code == 2);
  const Result bench = cli("bench --threads 0x1 --seconds ''");
  CHECK(bench.code == 2);
  CHECK(bench.err.find("--threads: '0x1' is not a decimal number") != std::string::npos);
  CHECK(bench.err.find("--seconds: empty value") != std::string::npos);
}

TEST_CASE("unwritable or special destinations are refused before computing: exit 2, no temporary left") {
  fs::create_directories(work("ro"));
  const std::string fifo = work("fifo");
  fs::remove(fifo);
  REQUIRE(std::system(("mkfifo '" + fifo + "'").c_str()) == 0);
  fs::remove(work("link.json"));
  fs::create_symlink(work("target.json"), work("link.json"));
  const std::string long_name = work(std::string(300, 'x') + ".json");
  for (const std::string& out : {work("missing/x.json"), work("ro/"), work("ro"), fifo, std::string("/dev/null"),
                                 work("link.json"), long_name}) {
    INFO(out);
    const auto start = std::chrono::steady_clock::now();
    const Result r = cli("run --samples 100000000 --quiet --out '" + out + "'");  // would take minutes if run
    CHECK(r.code == 2);
    CHECK(r.err.find("--out") != std::string::npos);
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(20));
  }
  CHECK(fs::is_fifo(fifo));                  // not replaced by a regular file
  CHECK(fs::is_symlink(work("link.json")));  // nor the link
  CHECK(fs::is_character_file("/dev/null"));
  for (const auto& e : fs::directory_iterator(MASKSCOPE_TEST_WORK))
    CHECK(e.path().filename().string().find(".maskscope-tmp") == std::string::npos);
}

TEST_CASE("memory is estimated before allocating: too large is refused with the estimate, exit 2; else fewer threads") {
  // MASKSCOPE_MEMORY_LIMIT caps the available memory (bytes) as a smaller machine would.
  fs::remove(work("big.json"));
  const Result r = cli_env("MASKSCOPE_MEMORY_LIMIT=100000000",
                           "run --n 512 --layers 16 --samples 1 --quiet --out " + work("big.json"));
  INFO(r.err);
  CHECK(r.code == 2);
  CHECK(r.err.find("needs about") != std::string::npos);
  CHECK(r.err.find("available") != std::string::npos);
  CHECK_FALSE(fs::exists(work("big.json")));
  // 2 threads (about 68 MB) do not fit in 80 MB at n 128, L 16 (with the 20% margin); 1 (55 MB) does: same numbers,
  // fewer threads, said on stderr.
  const Result fewer = cli_env("MASKSCOPE_MEMORY_LIMIT=80000000",
                               "run --n 128 --layers 16 --threads 2 --samples 2 --quiet --out " + work("fewer.json"));
  INFO(fewer.err);
  CHECK(fewer.code == 0);
  CHECK(fewer.err.find("using 1 threads") != std::string::npos);
  fs::remove(work("fewer.json"));
}
