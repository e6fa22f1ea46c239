// Real-model tensors through maskscope-cli: run --save-tensors then analyze repeats the run bit for bit;
// analyze refuses bad folders and layer lists (docs/tensors.md).
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

#include "cli_test_helpers.hpp"

using namespace cli_test;

TEST_CASE("round trip: run --save-tensors, then analyze, gives the run's metrics bit for bit") {
  for (const std::string& model : {std::string("--n 10 --d 64 --layers 3 --alpha 0.5"),
                                   std::string("--model random_weights --n 9 --d 32 --heads 4 --layers 2")}) {
    const std::string dir = work("tensors");
    fs::remove_all(dir);
    const Result r =
        cli("run " + model + " --samples 60 --seed 7 --quiet --save-tensors " + dir + " --out " + work("rt_run.json"));
    INFO(model << ": " << r.err);
    REQUIRE(r.code == 0);
    CHECK(fs::exists(dir + "/manifest.json"));
    CHECK(fs::exists(dir + "/logits.npy"));
    CHECK(fs::exists(dir + "/hidden.npy"));
    const Result a = cli("analyze " + dir + " --quiet --out " + work("rt_analyze.json"));
    INFO(a.err);
    REQUIRE(a.code == 0);
    const nlohmann::json run = read_json(work("rt_run.json")), an = read_json(work("rt_analyze.json"));
    CHECK(an["samples"] == 60);
    CHECK(an["config"]["source"] == "tensors");
    REQUIRE(an["layers"].size() == run["layers"].size());
    int compared = 0;
    for (std::size_t l = 0; l < run["layers"].size(); ++l)
      for (auto it = run["layers"][l].begin(); it != run["layers"][l].end(); ++it) {
        if (!an["layers"][l].contains(it.key())) continue;
        INFO("layer " << l + 1 << " " << it.key());
        CHECK(an["layers"][l][it.key()] == it.value());
        ++compared;
      }
    CHECK(compared >= 20);
    CHECK(an["layers"][0].contains("heads"));  // the shape of a random-weight run: layers with heads
  }
}

TEST_CASE("analyze refuses a bad folder with exit 2 naming the file; --save-tensors caps the samples") {
  fs::create_directories(work("empty_tensors"));
  const Result r = cli("analyze " + work("empty_tensors") + " --out " + work("never.json"));
  CHECK(r.code == 2);
  CHECK(r.err.find("manifest.json") != std::string::npos);
  CHECK_FALSE(fs::exists(work("never.json")));
  const Result big = cli("run --n 4 --d 8 --samples 20000 --save-tensors " + work("big_tensors") + " --quiet");
  CHECK(big.code == 2);
  CHECK(big.err.find("--save-tensors") != std::string::npos);
  CHECK(big.err.find("10000") != std::string::npos);
}

TEST_CASE(
    "analyze --layers: the chosen layers' numbers equal the full analysis's, under their own numbers; bad lists exit "
    "2") {
  const std::string dir = work("tensors_layers");
  fs::remove_all(dir);
  REQUIRE(
      cli("run --model random_weights --n 8 --d 16 --heads 2 --layers 3 --samples 30 --seed 2 --quiet --save-tensors " +
          dir + " --out " + work("layers_run.json"))
          .code == 0);
  REQUIRE(cli("analyze " + dir + " --quiet --out " + work("layers_all.json")).code == 0);
  const Result r = cli("analyze " + dir + " --quiet --layers 3,1 --out " + work("layers_some.json"));
  INFO(r.err);
  REQUIRE(r.code == 0);
  const nlohmann::json all = read_json(work("layers_all.json")), some = read_json(work("layers_some.json"));
  REQUIRE(some["layers"].size() == 2);
  CHECK(some["config"]["analysed_layers"] == 2);
  CHECK(some["layers"][0]["layer"] == 1);
  CHECK(some["layers"][1]["layer"] == 3);
  CHECK(some["layers"][0] == all["layers"][0]);
  CHECK(some["layers"][1] == all["layers"][2]);
  CHECK(some["embeddings"] == all["embeddings"]);
  for (const std::string bad : {"0", "4", "2-1", "1,1", "x", "1,"}) {
    const Result b = cli("analyze " + dir + " --quiet --layers " + bad);
    INFO(bad << ": " << b.err);
    CHECK(b.code == 2);
    CHECK(b.err.find("--layers") != std::string::npos);
    CHECK(b.err.find("[1, 3]") != std::string::npos);
  }
}

TEST_CASE("analyze refuses a FIFO as manifest.json or as an array at once (it never waits for a writer)") {
  const std::string dir = work("tensors_fifo");
  fs::remove_all(dir);
  REQUIRE(cli("run --n 5 --d 8 --samples 4 --quiet --save-tensors " + dir + " --out " + work("fifo_run.json")).code ==
          0);
  for (const std::string file : {"logits.npy", "manifest.json"}) {
    const std::string path = dir + "/" + file, kept = path + ".kept";
    fs::rename(path, kept);
    REQUIRE(std::system(("mkfifo '" + path + "'").c_str()) == 0);
    // Under `timeout`: before the fix analyze blocked in open() for ever (exit 124 here).
    const Result r = cli_env("timeout 20", "analyze " + dir + " --quiet --out " + work("fifo_analyze.json"));
    INFO(file << ": " << r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find(file) != std::string::npos);
    CHECK(r.err.find("not a regular file") != std::string::npos);
    fs::remove(path);
    fs::rename(kept, path);
  }
  CHECK(cli("analyze " + dir + " --quiet --out " + work("fifo_analyze.json")).code == 0);
}

TEST_CASE("a tensor folder not as it was written (an array from another run, a truncated one) is refused") {
  const std::string a = work("tensors_mixed_a"), b = work("tensors_mixed_b");
  for (const std::string& dir : {a, b}) fs::remove_all(dir);
  const std::string settings = "run --n 6 --d 8 --layers 2 --samples 5 --quiet --out " + work("mixed.json");
  REQUIRE(cli(settings + " --seed 1 --save-tensors " + a).code == 0);
  REQUIRE(cli(settings + " --seed 2 --save-tensors " + b).code == 0);
  const nlohmann::json manifest = read_json(a + "/manifest.json");
  CHECK(manifest["files"]["logits.npy"]["bytes"] == fs::file_size(a + "/logits.npy"));
  CHECK(manifest["files"]["hidden.npy"]["fnv1a64"].get<std::string>().size() == 16);
  REQUIRE(cli("analyze " + a + " --quiet --out " + work("mixed_analyze.json")).code == 0);
  // New logits beside old hidden states, as a write that failed partway used to leave them: same sizes.
  fs::copy_file(a + "/logits.npy", work("kept_logits.npy"), fs::copy_options::overwrite_existing);
  fs::copy_file(b + "/logits.npy", a + "/logits.npy", fs::copy_options::overwrite_existing);
  Result r = cli("analyze " + a + " --quiet --out " + work("mixed_analyze.json"));
  INFO(r.err);
  CHECK(r.code == 2);
  CHECK(r.err.find("logits.npy") != std::string::npos);
  CHECK(r.err.find("checksum differs") != std::string::npos);
  fs::copy_file(work("kept_logits.npy"), a + "/logits.npy", fs::copy_options::overwrite_existing);
  fs::resize_file(a + "/hidden.npy", fs::file_size(a + "/hidden.npy") - 64);  // a full disk
  r = cli("analyze " + a + " --quiet --out " + work("mixed_analyze.json"));
  CHECK(r.code == 2);
  CHECK(r.err.find("hidden.npy") != std::string::npos);
  CHECK(r.err.find("but the manifest lists") != std::string::npos);
  // A maskscope run's manifest without the list (an older maskscope's, or edited) is refused too.
  nlohmann::json bare = read_json(b + "/manifest.json");
  bare.erase("files");
  std::ofstream(b + "/manifest.json") << bare.dump();
  r = cli("analyze " + b + " --quiet --out " + work("mixed_analyze.json"));
  CHECK(r.code == 2);
  CHECK(r.err.find("lists no \"files\"") != std::string::npos);
}

TEST_CASE("--save-tensors: an unrelated folder is refused before computing, a run's own folder replaced whole") {
  const std::string mine = work("notes_folder");
  for (const std::string& gone : {mine, work("notes_run.json"), work("no_such")}) fs::remove_all(gone);
  fs::create_directories(mine);
  std::ofstream(mine + "/notes.txt") << "not tensors\n";
  // Without --quiet: a run that computed would print its "done:" line.
  Result r = cli("run --n 6 --d 8 --samples 5000 --save-tensors " + mine + " --out " + work("notes_run.json"));
  INFO(r.err);
  CHECK(r.code == 2);
  CHECK(r.err.find("--save-tensors") != std::string::npos);
  CHECK(r.err.find("notes.txt") != std::string::npos);
  CHECK(r.err.find("done:") == std::string::npos);
  CHECK(fs::exists(mine + "/notes.txt"));
  CHECK_FALSE(fs::exists(work("notes_run.json")));
  // A link to a tensor folder, a missing parent folder: refused as well.
  const std::string dir = work("tensors_again");
  fs::remove_all(dir);
  REQUIRE(cli("run --n 6 --d 8 --samples 5 --seed 1 --quiet --save-tensors " + dir).code == 0);
  fs::remove(work("tensors_link"));
  fs::create_directory_symlink(dir, work("tensors_link"));
  r = cli("run --n 6 --d 8 --samples 5 --quiet --save-tensors " + work("tensors_link"));
  CHECK(r.code == 2);
  CHECK(r.err.find("symbolic link") != std::string::npos);
  CHECK(cli("run --n 6 --d 8 --samples 5 --quiet --save-tensors " + work("no_such/tensors")).code == 2);
  // The run's own folder: replaced whole by the new run's (another seed), nothing left beside it.
  const std::string before = slurp(dir + "/logits.npy");
  REQUIRE(cli("run --n 6 --d 8 --samples 5 --seed 2 --quiet --save-tensors " + dir).code == 0);
  CHECK(slurp(dir + "/logits.npy") != before);
  CHECK(cli("analyze " + dir + " --quiet --out " + work("again.json")).code == 0);
  for (const auto& e : fs::directory_iterator(MASKSCOPE_TEST_WORK))
    CHECK(e.path().filename().string().find("maskscope-tmp") == std::string::npos);
}
