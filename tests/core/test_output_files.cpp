// The one output writer (core/formats/atomic_file.hpp) and the input reader (core/model/input_file.hpp):
// no write follows a planted link, a killed writer's temporaries are cleaned, a file another writer put
// at the target meanwhile is not overwritten, a folder is replaced whole or not at all; inputs that are
// not regular files or are too large are refused before a byte is read.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "core/formats/atomic_file.hpp"
#include "core/model/input_file.hpp"

using namespace maskscope;
namespace fs = std::filesystem;

namespace {

fs::path fresh_folder(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("maskscope_output_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void put(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

int count_temporaries(const fs::path& dir) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().find(kTemporarySuffix) != std::string::npos) ++n;
  return n;
}

}  // namespace

TEST_CASE("a link planted at the old temporary name or at the target is never written through") {
  const fs::path dir = fresh_folder("link");
  const fs::path victim = dir / "victim.txt", out = dir / "result.json";
  put(victim, "precious");
  // The name 0.6.0 used for its temporary, and a link at the target itself.
  fs::create_symlink(victim, dir / ".result.json.maskscope-tmp");
  std::string error;
  REQUIRE(write_file_atomic(out.string(), "{\"rp\": 0.5}\n", error));
  CHECK(slurp(victim) == "precious");
  CHECK(fs::is_regular_file(fs::symlink_status(out)));
  CHECK(slurp(out) == "{\"rp\": 0.5}\n");

  const fs::path linked = dir / "linked.json";
  fs::create_symlink(victim, linked);
  CHECK_FALSE(write_file_atomic(linked.string(), "overwritten", error));
  CHECK(error.find("not a regular file") != std::string::npos);
  CHECK(slurp(victim) == "precious");
  CHECK(fs::is_symlink(fs::symlink_status(linked)));
  fs::remove_all(dir);
}

TEST_CASE("the written file has the permissions of a new file and no temporary is left") {
  const fs::path dir = fresh_folder("mode");
  const mode_t mask = ::umask(022);
  std::string error;
  REQUIRE(write_file_atomic((dir / "a.csv").string(), "x\n", error));
  ::umask(mask);
  struct stat st {};
  REQUIRE(::stat((dir / "a.csv").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0644);
  CHECK(count_temporaries(dir) == 0);
  fs::remove_all(dir);
}

TEST_CASE("a failed write leaves the target as it was and no temporary") {
  const fs::path dir = fresh_folder("fail");
  put(dir / "a.json", "old");
  std::string error;
  CHECK_FALSE(write_atomically((dir / "a.json").string(),
                               [](int fd) {
                                 (void)write_all(fd, "half", 4, "a.json");
                                 return std::string("disk full (simulated)");
                               },
                               error));
  CHECK(error == "disk full (simulated)");
  CHECK(slurp(dir / "a.json") == "old");
  CHECK(count_temporaries(dir) == 0);
  fs::remove_all(dir);
}

TEST_CASE("temporaries of killed writers are removed, a live writer's are kept") {
  const fs::path dir = fresh_folder("stale");
  // Process ids above Linux's largest (2^22) never run; our own id is alive.
  const fs::path dead = dir / ".out.json.999999999.abcdefghijkl.maskscope-tmp";
  const fs::path old_form = dir / ".out.json.maskscope-tmp";
  const fs::path alive = dir / (".out.json." + std::to_string(::getpid()) + ".abcdefghijkl.maskscope-tmp");
  const fs::path other = dir / ".other.json.999999999.abcdefghijkl.maskscope-tmp";
  for (const auto& p : {dead, old_form, alive, other}) put(p, "partial");
  std::string error;
  REQUIRE(write_file_atomic((dir / "out.json").string(), "{}", error));
  CHECK_FALSE(fs::exists(dead));
  CHECK_FALSE(fs::exists(old_form));
  CHECK(fs::exists(alive));
  CHECK(fs::exists(other));  // another target's: left to remove_stale_temporaries
  CHECK(remove_stale_temporaries(dir.string()) == 1);
  CHECK_FALSE(fs::exists(other));
  CHECK(fs::exists(alive));
  fs::remove_all(dir);
}

TEST_CASE("a target another writer created or replaced after the check is not overwritten") {
  const fs::path dir = fresh_folder("claim");
  const std::string out = (dir / "result.json").string();
  std::string error;
  SUBCASE("created meanwhile") {
    REQUIRE(check_output_path(out).empty());
    put(out, "the other run's result");
    CHECK_FALSE(write_file_atomic(out, "ours", error));
    CHECK(error.find("another writer") != std::string::npos);
    CHECK(slurp(out) == "the other run's result");
  }
  SUBCASE("replaced meanwhile") {
    put(out, "before");
    REQUIRE(check_output_path(out).empty());
    const fs::path theirs = dir / "theirs";
    put(theirs, "the other run's result");
    fs::rename(theirs, out);
    CHECK_FALSE(write_file_atomic(out, "ours", error));
    CHECK(slurp(out) == "the other run's result");
  }
  SUBCASE("our own earlier write is not another writer") {
    REQUIRE(check_output_path(out).empty());
    REQUIRE(write_file_atomic(out, "first", error));
    REQUIRE(write_file_atomic(out, "second", error));
    CHECK(slurp(out) == "second");
  }
  CHECK(count_temporaries(dir) == 0);
  fs::remove_all(dir);
}

TEST_CASE("a folder is replaced whole, or left as it was") {
  const fs::path dir = fresh_folder("folder");
  const fs::path target = dir / "tensors";
  fs::create_directories(target);
  put(target / "manifest.json", "old manifest");
  put(target / "hidden.npy", "old hidden");
  std::string error;
  // A failure partway: the first file written, the second not.
  CHECK_FALSE(write_folder_atomically(
      target.string(),
      [](const std::string& tmp) {
        std::string e;
        if (!write_file_atomic(tmp + "/manifest.json", "new manifest", e)) return e;
        return std::string("no space left (simulated)");
      },
      error));
  CHECK(slurp(target / "manifest.json") == "old manifest");
  CHECK(slurp(target / "hidden.npy") == "old hidden");
  CHECK(count_temporaries(dir) == 0);

  REQUIRE(write_folder_atomically(
      target.string(),
      [](const std::string& tmp) {
        std::string e;
        write_file_atomic(tmp + "/manifest.json", "new manifest", e);
        return e;
      },
      error));
  CHECK(slurp(target / "manifest.json") == "new manifest");
  CHECK_FALSE(fs::exists(target / "hidden.npy"));  // the old folder is gone whole
  CHECK(count_temporaries(dir) == 0);

  // A new folder.
  REQUIRE(write_folder_atomically((dir / "fresh").string(), [](const std::string&) { return std::string(); }, error));
  CHECK(fs::is_directory(dir / "fresh"));
  fs::remove_all(dir);
}

TEST_CASE("inputs: a FIFO, a device, a folder and an oversized file are refused before reading") {
  const fs::path dir = fresh_folder("input");
  const fs::path fifo = dir / "preset.json";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::string content, error;
  // Would block in open() for a writer if the reader did not open with O_NONBLOCK.
  CHECK_FALSE(read_input_file(fifo.string(), kMaxTextInputBytes, "the preset", content, error));
  CHECK(error.find("not a regular file") != std::string::npos);
  CHECK_FALSE(read_input_file("/dev/zero", kMaxTextInputBytes, "the preset", content, error));
  CHECK(error.find("not a regular file") != std::string::npos);
  CHECK_FALSE(read_input_file(dir.string(), kMaxTextInputBytes, "the lesson", content, error));
  CHECK(error.find("folder") != std::string::npos);
  put(dir / "big.json", std::string(1000, ' '));
  CHECK_FALSE(read_input_file((dir / "big.json").string(), 999, "the preset", content, error));
  CHECK(error.find("over the limit") != std::string::npos);
  REQUIRE(read_input_file((dir / "big.json").string(), 1000, "the preset", content, error));
  CHECK(content.size() == 1000);
  CHECK_FALSE(read_input_file((dir / "missing.json").string(), 1000, "the preset", content, error));
  CHECK(error.find("does not exist") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("printable escapes control characters, NUL and invalid UTF-8, and keeps valid UTF-8") {
  using namespace std::string_literals;
  CHECK(printable("a\x1b[31mred\0b"s) == "a\\x1b[31mred\\x00b");
  CHECK(printable("line\nnext\ttab") == "line\\nnext\\ttab");
  CHECK(printable("\xce\xb1 = 0.5") == "\xce\xb1 = 0.5");  // alpha stays alpha
  CHECK(printable("\xff\xc0\x80") == "\\xff\\xc0\\x80");
  CHECK(printable("\xed\xa0\x80") == "\\xed\\xa0\\x80");  // a UTF-16 surrogate
  CHECK(printable(std::string(100, 'x'), 10) == std::string(10, 'x') + "...");
}
