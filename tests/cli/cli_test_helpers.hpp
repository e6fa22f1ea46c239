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
#include <unistd.h>

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

// The environment of runs checked against golden numbers of the batched random-weight kernel: its products at
// AVX2's level, whose bits the numbers are, also on AVX-512 processors (eigen_gemm.hpp).
inline const std::string kAvx2Products = "MASKSCOPE_GEMM=x86-64-v3 ";

inline std::string work(const std::string& name) { return std::string(MASKSCOPE_TEST_WORK) + "/" + name; }

#if MASKSCOPE_TEST_MPI
// maskscope-cli `args` under mpirun with `ranks` ranks on this machine ("--mca btl self,vader": shared memory,
// no network probing), as root in CI, with `env` (one NAME=value) passed to every rank. Sanitizer builds:
// OpenMPI unloads its dlopen'd components at MPI_Finalize, so LeakSanitizer sees their allocations with no
// module to attribute (or suppress) them to, as with Mesa in the window tests. Leak detection is off for
// the ranks only; every other ASan and UBSan check stays on.
inline Result mpirun(int ranks, const std::string& args, const std::string& env = "") {
  std::string launcher = std::string(MASKSCOPE_MPIEXEC) + " --oversubscribe";
  if (geteuid() == 0) launcher += " --allow-run-as-root";
  launcher += " --mca btl self,vader -np " + std::to_string(ranks);
  if (!env.empty()) launcher += " -x " + env.substr(0, env.find('='));
  launcher = "ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 " + launcher + " -x ASAN_OPTIONS";
  return cli(args, env + " " + launcher + " ");  // the launcher goes in front of maskscope-cli
}
#endif

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
