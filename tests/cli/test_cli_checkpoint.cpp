// `--checkpoint` (docs/model.md, "Checkpoints"): a checkpoint saved from the drawn network of `--weights fixed`
// (with GPT-2's explicit gains 1 and biases 0) gives that run's numbers bit for bit; its config.json sets the model
// settings and a contradicting flag is refused naming both values; run folders and --step, sweeps over steps,
// leakage and probe on a checkpoint; a corrupt one exits 2 naming the tensor.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cstring>
#include <filesystem>
#include <string>

#include "cli_test_helpers.hpp"
#include "core/formats/atomic_file.hpp"
#include "core/formats/safetensors.hpp"
#include "core/train/checkpoint.hpp"

using namespace cli_test;
using namespace maskscope;

namespace {

// The drawn network of `args` saved as a run folder's steps 0 and 10.
std::string saved_folder(const std::string& name, const Settings& s) {
  const std::string folder = work(name);
  fs::remove_all(folder);
  fs::create_directories(folder);
  const auto net = fixed_network(s);
  std::string error;
  for (const int step : {0, 10}) REQUIRE(save_checkpoint(folder + "/" + checkpoint_file_name(step), *net, s, error));
  return folder;
}

Settings drawn(bool positions_and_bos) {
  Settings s;
  s.model = Model::random_weights;
  s.weights = WeightsMode::fixed;
  s.weight_seed = 5;
  s.gamma = 1.0;
  s.n = positions_and_bos ? 9 : 6;
  s.d = 16;
  s.heads = 2;
  s.layers = 2;
  if (positions_and_bos) {
    s.vocab = 95;
    s.pos_embedding = PosEmbedding::learned;
    s.first_token = FirstToken::fixed;
  }
  return s;
}

nlohmann::json without_checkpoint(nlohmann::json j) {
  j = numbers(std::move(j));
  j["config"].erase("checkpoint");
  j["config"].erase("step");
  return j;
}

}  // namespace

TEST_CASE("checkpoint: step 0 of a saved drawn network equals run --weights fixed with its weight seed, bit for bit") {
  struct Case {
    bool positions_and_bos;
    std::string model_flags, run_flags;
  };
  const Case cases[] = {
      {false, "--model random_weights --weights fixed --weight-seed 5 --d 16 --heads 2 --layers 2", "--n 6"},
      {true,
       "--model random_weights --weights fixed --weight-seed 5 --d 16 --heads 2 --layers 2 --vocab 95 "
       "--pos-embedding learned --first-token fixed",
       "--n 9 --tokens builtin:zuo-addition --tokens-format chars"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.model_flags);
    const std::string folder = saved_folder("ckpt_step0", drawn(c.positions_and_bos));
    const std::string common = c.run_flags + " --samples 48 --seed 3 --stage-grams 1 --histograms 8 --quiet";
    Result r = cli("run " + c.model_flags + " " + common + " --out " + work("drawn.json"));
    REQUIRE_MESSAGE(r.code == 0, r.err);
    r = cli("run --checkpoint " + folder + "@0 " + common + " --out " + work("loaded.json"));
    REQUIRE_MESSAGE(r.code == 0, r.err);
    const nlohmann::json a = read_json(work("drawn.json")), b = read_json(work("loaded.json"));
    CHECK(b["config"]["checkpoint"] == folder + "@0");
    CHECK(without_checkpoint(a) == without_checkpoint(b));
    CHECK(a["layers"].size() == 2);
  }
}

TEST_CASE("checkpoint: its config.json sets the model settings; a contradicting flag is refused naming both") {
  const std::string folder = saved_folder("ckpt_flags", drawn(false));
  Result r = cli("run --checkpoint " + folder + " --d 32 --n 6 --samples 8 --quiet");
  CHECK(r.code == 2);
  CHECK(r.err.find("--d: d = 32 contradicts the checkpoint's config.json, which has d = 16") != std::string::npos);
  // The same value as the config is no contradiction.
  r = cli("run --checkpoint " + folder + " --d 16 --heads 2 --n 6 --samples 8 --quiet");
  CHECK_MESSAGE(r.code == 0, r.err);
  r = cli("run --checkpoint " + folder + " --step 7 --n 6 --samples 8 --quiet");
  CHECK(r.code == 2);
  CHECK(r.err.find("has no step 7; its steps: 0, 10") != std::string::npos);
  r = cli("run --checkpoint " + work("ckpt_none") + " --n 6 --samples 8 --quiet");
  CHECK(r.code == 2);
  CHECK(r.err.find("--checkpoint: checkpoint") != std::string::npos);
  CHECK(r.err.find("does not exist") != std::string::npos);
  r = cli("run --model random_weights --step 3 --n 6 --samples 8 --quiet");
  CHECK(r.code == 2);
  CHECK(r.err.find("--step: step picks a checkpoint") != std::string::npos);
}

TEST_CASE("checkpoint: sweep --vary step, leakage and probe run on a checkpoint") {
  const std::string folder = saved_folder("ckpt_sweep", drawn(false));
  const std::string out = work("ckpt_sweep.json");
  Result r = cli("sweep --quiet --checkpoint " + folder + " --vary step=0,10 --n 6 --samples 40 --seed 2 --out " + out);
  REQUIRE_MESSAGE(r.code == 0, r.err);
  const nlohmann::json j = read_json(out);
  REQUIRE(j["points"].size() == 2);
  CHECK(j["points"][0]["settings"]["step"] == 0);
  CHECK(j["points"][1]["settings"]["step"] == 10);
  CHECK(j["points"][0]["layers"] == j["points"][1]["layers"]);  // the same network saved twice
  r = cli("leakage --checkpoint " + folder + " --n 6 --samples 40 --quiet --out " + work("ckpt_leakage.json"));
  CHECK_MESSAGE(r.code == 0, r.err);
  r = cli("probe --checkpoint " + folder + " --n 6 --train 20 --test 10 --threads 1 --quiet --out " +
          work("ckpt_probe.json"));
  CHECK_MESSAGE(r.code == 0, r.err);
}

TEST_CASE("checkpoint: a corrupt checkpoint exits 2 naming the tensor and the first bad index") {
  const Settings s = drawn(false);
  const std::string folder = saved_folder("ckpt_corrupt", s);
  const std::string path = folder + "/step-000010.safetensors";
  std::string bytes = safetensors_bytes(checkpoint_tensors(*fixed_network(s), s));
  const SafeTensorsHeader h = parse_safetensors_header(bytes, bytes.size(), "mem");
  for (const SafeTensorInfo& t : h.tensors)
    if (t.name == "transformer.h.1.attn.c_proj.weight") {
      const float nan = std::nanf("");
      std::memcpy(bytes.data() + h.data_start + t.begin + (3 * 16 + 4) * 4, &nan, 4);
    }
  std::string error;
  REQUIRE(write_file_atomic(path, bytes, error));
  Result r = cli("run --checkpoint " + folder + " --n 6 --samples 8 --quiet");
  CHECK(r.code == 2);
  CHECK(r.err.find("tensor 'transformer.h.1.attn.c_proj.weight' holds a non-finite value (nan) at index [3, 4]") !=
        std::string::npos);
  // Memory is estimated before the tensors are read: over the limit, the run is refused without opening them.
  r = cli_env("MASKSCOPE_MEMORY_LIMIT=20000", "run --checkpoint " + folder + " --n 6 --samples 8 --quiet");
  CHECK(r.code == 2);
  CHECK(r.err.find("--n: ") != std::string::npos);
  CHECK(r.err.find("non-finite") == std::string::npos);
  // Truncated.
  REQUIRE(write_file_atomic(path, bytes.substr(0, bytes.size() - 100), error));
  r = cli("run --checkpoint " + folder + " --n 6 --samples 8 --quiet");
  CHECK(r.code == 2);
  CHECK(r.err.find("out of range") != std::string::npos);
  // Step 0 is still fine.
  CHECK(cli("run --checkpoint " + folder + "@0 --n 6 --samples 8 --quiet").code == 0);
}
