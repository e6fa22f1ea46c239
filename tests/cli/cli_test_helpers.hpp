// What the cli_tests share: run maskscope-cli with arguments (exit code, stdout, stderr), file names in
// the tests' work folder, and a result's numbers without its timing, threads and provenance.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <sys/wait.h>

namespace cli_test {

namespace fs = std::filesystem;

struct Result {
  int code;
  std::string out, err;
};

inline std::string slurp(const std::string& path) {
  std::ifstream is(path);
  return std::string(std::istreambuf_iterator<char>(is), {});
}

// maskscope-cli `args`, with `env` (e.g. "NAME=value " or a launcher) in front of it.
inline Result cli(const std::string& args, const std::string& env = "") {
  fs::create_directories(MASKSCOPE_TEST_WORK);
  const std::string out = std::string(MASKSCOPE_TEST_WORK) + "/stdout.txt";
  const std::string err = std::string(MASKSCOPE_TEST_WORK) + "/stderr.txt";
  const std::string cmd = env + "\"" + MASKSCOPE_CLI + "\" " + args + " >" + out + " 2>" + err;
  const int status = std::system(cmd.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
}

inline Result cli_env(const std::string& env, const std::string& args) { return cli(args, env + " "); }

inline std::string work(const std::string& name) { return std::string(MASKSCOPE_TEST_WORK) + "/" + name; }

inline nlohmann::json read_json(const std::string& path) {
  std::ifstream is(path);
  return nlohmann::json::parse(is);
}

// The numbers of a result: everything but timing, threads and provenance.
inline nlohmann::json numbers(nlohmann::json j) {
  for (const char* k : {"elapsed_s", "samples_per_s", "threads_used", "mpi_ranks", "merged_files", "maskscope_version"})
    j.erase(k);
  j["config"].erase("threads");
  return j;
}

}  // namespace cli_test
