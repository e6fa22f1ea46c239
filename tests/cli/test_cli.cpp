// The maskscope-cli contract: JSON layout of `run`, closed forms from `theory`, and exit code 2
// with the flag named for every invalid input (and no output file written).
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

#include "core/model/theory.hpp"

namespace fs = std::filesystem;

namespace {

struct Result {
  int code;
  std::string out, err;
};

Result cli(const std::string& args, const std::string& env = "") {
  fs::create_directories(MASKSCOPE_TEST_WORK);
  const std::string out = std::string(MASKSCOPE_TEST_WORK) + "/stdout.txt";
  const std::string err = std::string(MASKSCOPE_TEST_WORK) + "/stderr.txt";
  const std::string cmd = env + "\"" + MASKSCOPE_CLI + "\" " + args + " >" + out + " 2>" + err;
  const int status = std::system(cmd.c_str());
  auto slurp = [](const std::string& p) {
    std::ifstream is(p);
    return std::string(std::istreambuf_iterator<char>(is), {});
  };
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
}

Result cli_env(const std::string& env, const std::string& args) { return cli(args, env + " "); }

std::string work(const std::string& name) { return std::string(MASKSCOPE_TEST_WORK) + "/" + name; }

}  // namespace

TEST_CASE("run writes the documented JSON") {
  const std::string path = work("result.json");
  fs::remove(path);
  const Result r = cli("run --n 6 --d 32 --layers 3 --alpha 0.5 --norm layernorm --scale sqrt_d --gamma 0 --rope 0 "
                       "--mask causal --unit-input 0 --samples 3000 --seed 1 --threads 2 --quiet --out " + path);
  REQUIRE(r.code == 0);
  std::ifstream is(path);
  const auto j = nlohmann::json::parse(is);
  CHECK(j["config"]["n"] == 6);
  CHECK(j["config"]["norm"] == "layernorm");
  CHECK(j["config"]["mask"] == "causal");
  CHECK(j["samples"] == 3000);
  CHECK(j["samples_per_s"].get<double>() > 0);
  REQUIRE(j["layers"].size() == 3);
  const auto& L = j["layers"][1];
  CHECK(L["layer"] == 2);
  for (const char* key : {"rp", "rp_se", "adjacency", "score_mean", "score_se", "weight_mean", "cosine_mean",
                          "score_diag_normalized", "norm_mean"})
    CHECK(L.contains(key));
  CHECK(L["score_mean"].size() == 6);
  CHECK(L["score_mean"][0][1].is_null());  // masked
  CHECK(L["score_diag_normalized"][2][3].is_null());
  CHECK(L["norm_mean"].size() == 6);
  double row = 0;
  for (const auto& v : L["weight_mean"][5]) row += v.is_null() ? 0.0 : v.get<double>();
  CHECK(row == doctest::Approx(1.0).epsilon(1e-6));
  CHECK(j["layers"][0]["score_mean"][3][3].get<double>() == doctest::Approx(std::sqrt(32.0)).epsilon(1e-5));
}

TEST_CASE("the progress line goes to stderr unless --quiet") {
  const Result r = cli("run --n 4 --d 8 --samples 2000 --out " + work("p.json"));
  CHECK(r.code == 0);
  CHECK(r.err.find("samples/s") != std::string::npos);
  const Result q = cli("run --n 4 --d 8 --samples 2000 --quiet --out " + work("p.json"));
  CHECK(q.err.empty());
}

TEST_CASE("theory prints the closed forms") {
  Result r = cli("theory --kind h_of_j --n 10 --d 64 --alpha 0.4 --gamma 1");
  REQUIRE(r.code == 0);
  auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["h"].size() == 10);
  CHECK(j["h"][4].get<double>() == doctest::Approx(maskscope::theory::ln_recency_h_of_j(5, 64, 0.4, 1.0)));
  r = cli("theory --kind behind_rope_layer2 --n 5 --alpha 0.2 --gamma 1");
  REQUIRE(r.code == 0);
  j = nlohmann::json::parse(r.out);
  CHECK(j["layer2_score"][4][1].get<double>() == doctest::Approx(maskscope::theory::behind_rope_layer2_score(5, 2, 0.2, 1.0)));
  CHECK(j["layer2_score"][1][4].is_null());
  r = cli("theory --kind ln_recency_s2 --n 4 --d 16");
  REQUIRE(r.code == 0);
  j = nlohmann::json::parse(r.out);
  CHECK(j["layer2_score"][3][3].get<double>() == doctest::Approx(4.0));
}

TEST_CASE("every invalid flag: exit code 2, the flag named, no output file") {
  const std::string path = work("never.json");
  const char* cases[][2] = {
      {"--n 0", "--n"},          {"--n 513", "--n"},           {"--n ten", "--n"},
      {"--d 0", "--d"},          {"--d 70000", "--d"},         {"--layers 0", "--layers"},
      {"--layers 17", "--layers"}, {"--alpha -0.1", "--alpha"}, {"--alpha 1.5", "--alpha"},
      {"--alpha nan", "--alpha"}, {"--norm batch", "--norm"},  {"--scale two", "--scale"},
      {"--gamma 2", "--gamma"},  {"--rope -1", "--rope"},      {"--rope 0.5", "--rope"},
      {"--d 15 --rope 10000", "--rope"}, {"--mask diagonal", "--mask"}, {"--mask window:0", "--mask"},
      {"--mask window:99", "--mask"}, {"--samples 0", "--samples"}, {"--threads -2", "--threads"},
      {"--unit-input 7", "--unit-input"}, {"--bogus 1", "--bogus"},
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

TEST_CASE("random_weights: the JSON contract of docs/model.md section 7") {
  const std::string path = work("random_weights.json");
  fs::remove(path);
  const Result r = cli("run --model random_weights --n 8 --d 24 --layers 2 --heads 3 --vocab 16 --mlp 1 --init-mean 0 "
                       "--init-std 0.02 --embed-std 0.05 --weights per_sample --weight-seed 1 --samples 400 --seed 3 "
                       "--threads 2 --quiet --out " + path);
  REQUIRE(r.code == 0);
  std::ifstream is(path);
  const auto j = nlohmann::json::parse(is);
  CHECK(j["config"]["model"] == "random_weights");
  CHECK(j["config"]["gamma"] == 1.0);  // the family's default
  CHECK(j["config"]["embed_std"] == 0.05);
  REQUIRE(j["layers"].size() == 2);
  for (const auto& L : j["layers"]) {
    for (const char* key : {"adjacency", "adjacency_se", "norm_adjacency", "norm_adjacency_se", "rp", "rp_se"})
      CHECK(L[key].is_number());
    REQUIRE(L["heads"].size() == 3);
    double mean = 0;
    for (const auto& h : L["heads"]) mean += h["rp"].get<double>() / 3;
    CHECK(L["rp"].get<double>() == doctest::Approx(mean).epsilon(1e-12));
  }
  const auto& e = j["embeddings"];
  for (const char* key : {"adjacency", "adjacency_se", "norm_adjacency", "norm_adjacency_se"}) CHECK(e[key].is_number());
  CHECK(e["cosine_mean"].size() == 8);
  CHECK(e["cosine_mean"][3][3] == 1.0);
  CHECK(e["norm_mean"].size() == 8);
  // The embeddings' norms: sigma sqrt(d) on average (0.05 * sqrt(24) = 0.245), within 5%.
  CHECK(e["norm_mean"][0].get<double>() == doctest::Approx(0.05 * std::sqrt(24.0)).epsilon(0.05));

  // parameter_free keeps its output: no heads, no embeddings.
  const Result p = cli("run --n 5 --d 8 --layers 1 --samples 10 --quiet --out " + path);
  REQUIRE(p.code == 0);
  std::ifstream ip(path);
  const auto jp = nlohmann::json::parse(ip);
  CHECK_FALSE(jp.contains("embeddings"));
  CHECK_FALSE(jp["layers"][0].contains("heads"));
  CHECK(jp["config"]["gamma"] == 0.0);
}

TEST_CASE("random_weights: every invalid flag or combination exits 2 naming the flag") {
  const std::string path = work("never.json");
  const std::string rw = "--model random_weights ";
  const std::pair<std::string, const char*> cases[] = {
      {rw + "--d 30 --heads 4", "--heads"},          {rw + "--heads 0", "--heads"},
      {rw + "--heads 65", "--heads"},                {rw + "--vocab 0", "--vocab"},
      {rw + "--init-std -0.1", "--init-std"},        {rw + "--embed-std -1", "--embed-std"},
      {rw + "--init-mean 1e9", "--init-mean"},       {rw + "--weights sometimes", "--weights"},
      {rw + "--mlp 2", "--mlp"},                     {rw + "--d 8192", "--d"},
      {rw + "--d 30 --heads 6 --rope 10000", "--rope"}, {rw + "--weight-seed -1", "--weight-seed"},
      {rw + "--alpha 0.5", "--alpha"},               {rw + "--scale one", "--scale"},
      {rw + "--unit-input 1", "--unit-input"},       {"--model bogus", "--model"},
      {"--heads 2", "--heads"},                      {"--vocab 8", "--vocab"},
      {"--init-std 0.1", "--init-std"},              {"--weights fixed", "--weights"},
  };
  for (const auto& [args, flag] : cases) {
    fs::remove(path);
    INFO(args);
    const Result r = cli("run --quiet --samples 10 " + args + " --out " + path);
    CHECK(r.code == 2);
    CHECK(r.err.find(flag) != std::string::npos);
    CHECK_FALSE(fs::exists(path));
  }
}

TEST_CASE("leakage: the run JSON's dR^2 keys, and the four-way table of maskscope-cli leakage") {
  const std::string path = work("leak_run.json");
  REQUIRE(cli("run --n 8 --d 32 --layers 2 --samples 2000 --quiet --out " + path).code == 0);
  std::ifstream is(path);
  const auto j = nlohmann::json::parse(is);
  for (const auto& L : j["layers"]) {
    for (const char* key : {"delta_r2", "delta_r2_se", "delta_r2_mean_map", "r2_base", "weight_delta_r2"})
      CHECK(L[key].is_number());
    REQUIRE(L["delta_r2_bins"].size() == 2);  // [0, 5) and [5, 8)
    CHECK(L["delta_r2_bins"][0]["from"] == 0);
    CHECK(L["delta_r2_bins"][1]["to"] == 8);
  }
  const std::string lpath = work("leak.json");
  fs::remove(lpath);
  const Result r = cli("leakage --n 10 --d 32 --layers 2 --norm l2 --scale one --gamma 1 --unit-input 1 --alpha 0.2 "
                       "--rope 10000 --samples 3000 --quiet --out " + lpath);
  REQUIRE(r.code == 0);
  std::ifstream il(lpath);
  const auto k = nlohmann::json::parse(il);
  REQUIRE(k["ablations"].size() == 4);
  CHECK(k["ablations"][1]["config"]["rope"] == 0.0);            // identity RoPE
  CHECK(k["ablations"][2]["config"]["rope_scramble"] == 1);     // scrambled RoPE
  CHECK(k["ablations"][3]["config"]["mask"] == "bidirectional");
  CHECK(k["ablations"][3]["config"]["seed"] == k["config"]["seed"]);  // same random draws
  const auto& l2 = k["layers"][1];
  const double base = l2["baseline"]["delta_r2"], bi = l2["bidirectional"]["delta_r2"];
  CHECK(l2["causal_mask_share"].get<double>() == doctest::Approx(1 - bi / base));
  CHECK(l2["identity_rope_ratio"]["value"].get<double>() ==
        doctest::Approx(l2["identity_rope"]["delta_r2"].get<double>() / base));
  const Result t = cli("leakage --n 10 --d 32 --layers 2 --samples 500 --quiet --table");
  REQUIRE(t.code == 0);
  CHECK(t.out.find("bidirectional") != std::string::npos);
  CHECK(t.out.find("n/a") != std::string::npos);  // no RoPE in the baseline: its RoPE ablations do not apply
  // Refusals: exit 2 naming the flag.
  CHECK(cli("leakage --mask bidirectional --samples 10").code == 2);
  const Result bad = cli("run --rope-scramble 3 --samples 10 --out " + work("never.json"));
  CHECK(bad.code == 2);
  CHECK(bad.err.find("--rope-scramble") != std::string::npos);
}

TEST_CASE("issue 9's parsing table: decimal only, empty is an error, no wrapping, no flag taken as a value") {
  const std::string path = work("never2.json");
  // {arguments, flag that must be named, text the message must contain}
  const char* cases[][3] = {
      {"--alpha ''", "--alpha", "empty"},           {"--gamma ''", "--gamma", "empty"},
      {"--rope ''", "--rope", "empty"},             {"--unit-input ''", "--unit-input", "valid: 0, 1"},
      {"--seed ''", "--seed", "empty"},             {"--threads ''", "--threads", "empty"},
      {"--n ''", "--n", "empty"},                   {"--n 0x10", "--n", "not a decimal number"},
      {"--n 10.7", "--n", "not a whole number"},    {"--seed -1", "--seed", "[0, 18446744073709551615]"},
      {"--seed 18446744073709551616", "--seed", "out of range"},
      {"--threads 4294967297", "--threads", "[0, 256]"},
      {"--n 4294967306", "--n", "[1, 512]"},        {"--alpha inf", "--alpha", "not a decimal number"},
      {"--alpha ' 0.5'", "--alpha", "not a decimal number"},
      {"--unit-input 2", "--unit-input", "valid: 0, 1"},
      {"--out --quiet", "--out", "got the flag"},
  };
  for (const auto& c : cases) {
    fs::remove(path);
    INFO(std::string(c[0]));
    const Result r = cli(std::string("run --samples 10 ") + c[0] + (std::string(c[1]) == "--out" ? "" : " --quiet --out " + path));
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
  for (const char* text : {"--n: 'abc' is not a decimal number", "--d: 0 is out of range; valid: whole number in [1, 65536]",
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
  CHECK(fs::is_fifo(fifo));                 // not replaced by a regular file
  CHECK(fs::is_symlink(work("link.json")));  // nor the link
  CHECK(fs::is_character_file("/dev/null"));
  for (const auto& e : fs::directory_iterator(MASKSCOPE_TEST_WORK))
    CHECK(e.path().filename().string().find(".maskscope-tmp") == std::string::npos);
}

TEST_CASE("memory is estimated before allocating: too large is refused with the estimate, exit 2; else fewer threads") {
  // MASKSCOPE_MEMORY_LIMIT caps the available memory (bytes) as a smaller machine would.
  fs::remove(work("big.json"));
  const Result r = cli_env("MASKSCOPE_MEMORY_LIMIT=100000000", "run --n 512 --layers 16 --samples 1 --quiet --out " + work("big.json"));
  INFO(r.err);
  CHECK(r.code == 2);
  CHECK(r.err.find("needs about") != std::string::npos);
  CHECK(r.err.find("available") != std::string::npos);
  CHECK_FALSE(fs::exists(work("big.json")));
  // 2 threads (about 68 MB) do not fit in 80 MB at n 128, L 16 (with the 20% margin); 1 (55 MB) does: same numbers,
  // fewer threads, said on stderr.
  const Result fewer = cli_env("MASKSCOPE_MEMORY_LIMIT=80000000", "run --n 128 --layers 16 --threads 2 --samples 2 --quiet --out " + work("fewer.json"));
  INFO(fewer.err);
  CHECK(fewer.code == 0);
  CHECK(fewer.err.find("using 1 threads") != std::string::npos);
  fs::remove(work("fewer.json"));
}

// ---- scale-out: shards, merge, MPI ----

namespace {

nlohmann::json read_json(const std::string& path) {
  std::ifstream is(path);
  return nlohmann::json::parse(is);
}

// The numbers of a result: everything but timing, threads and provenance.
nlohmann::json numbers(nlohmann::json j) {
  for (const char* k : {"elapsed_s", "samples_per_s", "threads_used", "mpi_ranks", "merged_files", "maskscope_version"}) j.erase(k);
  j["config"].erase("threads");
  return j;
}

const std::string kShardRun = "run --n 12 --d 32 --layers 2 --alpha 0.5 --samples 150000 --seed 3 --quiet";

}  // namespace

TEST_CASE("shards merged in any order give the same numbers as one run, bit for bit") {
  REQUIRE(cli(kShardRun + " --threads 2 --out " + work("whole.json")).code == 0);
  for (int k = 1; k <= 3; ++k)
    REQUIRE(cli(kShardRun + " --threads " + std::to_string(k) + " --shard " + std::to_string(k) + "/3 --out " +
                work("part-" + std::to_string(k) + ".msum")).code == 0);
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
      REQUIRE(cli(kShardRun + " --shard " + std::to_string(k) + "/3 --out " + work("part-" + std::to_string(k) + ".msum")).code == 0);
  const std::string p1 = work("part-1.msum"), p2 = work("part-2.msum"), p3 = work("part-3.msum");
  REQUIRE(cli("run --n 12 --d 32 --layers 2 --alpha 0.5 --samples 150000 --seed 4 --quiet --shard 2/3 --out " +
              work("seed4.msum")).code == 0);
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
  for (const auto& [args, message] : std::vector<std::pair<std::string, std::string>>{
           {"--shard 2/3 --out " + work("x.json"), "--out FILE.msum"},
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
namespace {
Result mpirun(int ranks, const std::string& args, const std::string& env = "") {
  std::string launcher = std::string(MASKSCOPE_MPIEXEC) + " --oversubscribe";
  if (geteuid() == 0) launcher += " --allow-run-as-root";  // CI runs as root
  // "--mca btl self,vader": shared memory on one machine, no network probing.
  launcher += " --mca btl self,vader -np " + std::to_string(ranks);
  if (!env.empty()) launcher += " -x " + env.substr(0, env.find('='));  // one NAME=value for every rank
  // Sanitizer builds: OpenMPI unloads its dlopen'd components at MPI_Finalize, so LeakSanitizer sees
  // their allocations with no module to attribute (or suppress) them to, as with Mesa in the window
  // tests. Leak detection is off for the ranks only; every other ASan and UBSan check stays on.
  launcher = "ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 " + launcher + " -x ASAN_OPTIONS";
  return cli(args, env + " " + launcher + " ");  // the launcher goes in front of maskscope-cli
}
}  // namespace

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

// ---- real-model tensors: the round trip ----

TEST_CASE("round trip: run --save-tensors, then analyze, gives the run's metrics bit for bit") {
  for (const std::string& model : {std::string("--n 10 --d 64 --layers 3 --alpha 0.5"),
                                   std::string("--model random_weights --n 9 --d 32 --heads 4 --layers 2")}) {
    const std::string dir = work("tensors");
    fs::remove_all(dir);
    const Result r = cli("run " + model + " --samples 60 --seed 7 --quiet --save-tensors " + dir + " --out " + work("rt_run.json"));
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

TEST_CASE("analyze --layers: the chosen layers' numbers equal the full analysis's, under their own numbers; bad lists exit 2") {
  const std::string dir = work("tensors_layers");
  fs::remove_all(dir);
  REQUIRE(cli("run --model random_weights --n 8 --d 16 --heads 2 --layers 3 --samples 30 --seed 2 --quiet --save-tensors " + dir +
              " --out " + work("layers_run.json")).code == 0);
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
