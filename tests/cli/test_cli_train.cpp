// maskscope-cli train: the same bytes for any thread count, and bad input refused with exit 2 naming the flag,
// before anything is written into the folder.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "cli_test_helpers.hpp"

using namespace cli_test;

namespace {
const std::string kTrain =
    "train --task addition --d 16 --heads 2 --layers 2 --steps 6 --batch 8 --eval-every 3 "
    "--eval-sequences 16 --quiet";
}

TEST_CASE("train: 1 and 2 threads write the same checkpoint and state bytes") {
  fs::remove_all(work("train1"));
  fs::remove_all(work("train2"));
  REQUIRE(cli(kTrain + " --threads 1 --out " + work("train1")).code == 0);
  REQUIRE(cli(kTrain + " --threads 2 --out " + work("train2")).code == 0);
  for (const char* name : {"step-000006.safetensors", "state-000006.safetensors", "config.json"}) {
    INFO(name);
    const std::string a = slurp(work("train1") + "/" + name);
    CHECK(!a.empty());
    CHECK(a == slurp(work("train2") + "/" + name));
  }
}

TEST_CASE("train: bad flags exit 2 naming the flag and its range, and leave the folder alone") {
  fs::remove_all(work("train_bad"));
  struct Case {
    std::string args, flag;
  };
  for (const Case& c : {Case{"--task multiplication", "--task"}, Case{"--task addition --steps 0", "--steps"},
                        Case{"--task addition --batch 0", "--batch"}, Case{"--task addition --batch 70000", "--batch"},
                        Case{"--task addition --lr 0", "--lr"}, Case{"--task addition --mask bidirectional", "--mask"},
                        Case{"--task addition --n 5", "--n"}, Case{"", "--task"},
                        Case{"--task addition --warmup 100 --steps 10", "--warmup"}}) {
    INFO(c.args);
    const Result r = cli("train " + c.args + " --d 16 --heads 2 --layers 1 --quiet --out " + work("train_bad"));
    CHECK(r.code == 2);
    CHECK(r.err.find(c.flag) != std::string::npos);
    CHECK(!fs::exists(work("train_bad")));
  }
  // A folder holding another run is refused; its files stay as they were.
  fs::remove_all(work("train_other"));
  REQUIRE(cli(kTrain + " --out " + work("train_other")).code == 0);
  const std::string before = slurp(work("train_other") + "/config.json");
  const Result again = cli(kTrain + " --lr 0.01 --out " + work("train_other"));
  CHECK(again.code == 2);
  CHECK(again.err.find("--out") != std::string::npos);
  CHECK(slurp(work("train_other") + "/config.json") == before);
  // --resume with a model flag is refused; --resume of a finished run has nothing to do.
  CHECK(cli("train --resume " + work("train_other") + " --d 32 --quiet").code == 2);
  CHECK(cli("train --resume " + work("train_other") + " --quiet").code == 0);
}

TEST_CASE("train: a run that would not fit in memory is refused before the folder is made, naming --batch") {
  fs::remove_all(work("train_memory"));
  const Result r = cli_env("MASKSCOPE_MEMORY_LIMIT=20000000",
                           "train --task addition --d 256 --heads 2 --layers 2 "
                           "--steps 6 --batch 8 --quiet --out " +
                               work("train_memory"));
  CHECK(r.code == 2);
  CHECK(r.err.find("--batch") != std::string::npos);
  CHECK(!fs::exists(work("train_memory")));
}

#if MASKSCOPE_TEST_MPI
TEST_CASE("mpirun -np 2 train: the chunks split over two ranks give the one-process bytes") {
  fs::remove_all(work("train_single"));
  fs::remove_all(work("train_mpi"));
  REQUIRE(cli(kTrain + " --threads 1 --out " + work("train_single")).code == 0);
  const Result r = mpirun(2, kTrain + " --threads 1 --out " + work("train_mpi"));
  INFO(r.err);
  REQUIRE(r.code == 0);
  for (const char* name : {"step-000006.safetensors", "state-000006.safetensors", "config.json"}) {
    INFO(name);
    const std::string a = slurp(work("train_single") + "/" + name);
    CHECK(!a.empty());
    CHECK(a == slurp(work("train_mpi") + "/" + name));
  }
}
#endif
