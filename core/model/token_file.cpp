// Given token sequences (token_file.hpp).
#include "core/model/token_file.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <map>
#include <mutex>
#include <stdexcept>
#include <tuple>

#include "core/model/input_file.hpp"

namespace maskscope {

namespace embedded {  // assets/tokens/*.txt, embedded by tools/embed.cmake (core/CMakeLists.txt)
extern const std::string_view tokens_zuo_addition, tokens_zuo_reversal, tokens_zuo_indexing, tokens_zuo_ordering;
}

namespace {

constexpr std::string_view kBuiltin = "builtin:";
constexpr std::int64_t kMaxId = 1'000'000'000;  // Limits::vocab_max

struct Builtin {
  const char* name;
  const std::string_view* text;
};
const Builtin kBuiltins[] = {{"zuo-addition", &embedded::tokens_zuo_addition},
                             {"zuo-reversal", &embedded::tokens_zuo_reversal},
                             {"zuo-indexing", &embedded::tokens_zuo_indexing},
                             {"zuo-ordering", &embedded::tokens_zuo_ordering}};

// The file's name in messages: escaped (printable), as everything else a message quotes from input.
std::string line_label(const std::string& name, int line) {
  return printable(name, 200) + " line " + std::to_string(line);
}

// One line's tokens.
void parse_line(std::string_view line, TokensFormat format, const std::string& name, int number,
                std::vector<std::int64_t>& out) {
  if (format == TokensFormat::chars) {
    for (std::size_t c = 0; c < line.size(); ++c) {
      const unsigned char ch = static_cast<unsigned char>(line[c]);
      if (ch < 32 || ch > 126)
        throw std::runtime_error(line_label(name, number) + ", character " + std::to_string(c + 1) + " (byte " +
                                 std::to_string(int(ch)) +
                                 ") is not printable ASCII; tokens_format chars reads the characters ' ' .. '~' as "
                                 "ids 0 .. 94 (use tokens_format ids for numbers)");
      out.push_back(std::int64_t(ch) - 32);
    }
    return;
  }
  std::size_t at = 0;
  while (at < line.size()) {
    if (line[at] == ' ' || line[at] == '\t') {
      ++at;
      continue;
    }
    std::size_t end = at;
    while (end < line.size() && line[end] != ' ' && line[end] != '\t') ++end;
    const std::string_view word = line.substr(at, end - at);
    std::int64_t id = -1;
    const auto [ptr, ec] = std::from_chars(word.data(), word.data() + word.size(), id);
    if (ec != std::errc() || ptr != word.data() + word.size() || id < 0 || id >= kMaxId)
      throw std::runtime_error(line_label(name, number) + ", token " + std::to_string(out.size() + 1) + ": '" +
                               printable(word) +
                               "' is not a token id; valid: whole numbers in [0, 10^9) separated by spaces "
                               "(below vocab; tokens_format chars reads characters)");
    out.push_back(id);
    at = end;
  }
}

}  // namespace

TokenSequences parse_token_sequences(std::string_view text, TokensFormat format, const std::string& name) {
  TokenSequences t;
  std::vector<std::int64_t> row;
  int number = 0;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(at, end - at);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    ++number;
    row.clear();
    parse_line(line, format, name, number, row);
    if (row.empty())
      throw std::runtime_error(line_label(name, number) + " is empty; every line holds one sequence of tokens");
    if (t.lines == 0) t.length = int(row.size());
    if (int(row.size()) != t.length)
      throw std::runtime_error(line_label(name, number) + " has " + std::to_string(row.size()) + " tokens, line 1 " +
                               std::to_string(t.length) + "; every line needs the same length");
    for (const std::int64_t id : row)
      if (id > t.max_id) {
        t.max_id = id;
        t.max_id_line = number;
      }
    t.ids.insert(t.ids.end(), row.begin(), row.end());
    ++t.lines;
    at = end + 1;
  }
  if (t.lines == 0)
    throw std::runtime_error(printable(name, 200) + " holds no token sequence (an empty file); one sequence per line");
  return t;
}

std::vector<std::string> builtin_token_files() {
  std::vector<std::string> names;
  for (const Builtin& b : kBuiltins) names.emplace_back(b.name);
  return names;
}

std::shared_ptr<const TokenSequences> load_token_sequences(const std::string& path, TokensFormat format) {
  if (path.rfind(kBuiltin, 0) == 0) {
    const std::string name = path.substr(kBuiltin.size());
    for (const Builtin& b : kBuiltins)
      if (name == b.name) {
        static std::mutex mutex;
        static std::map<std::pair<std::string, TokensFormat>, std::shared_ptr<const TokenSequences>> cache;
        std::lock_guard lock(mutex);
        auto& slot = cache[{name, format}];
        if (!slot) slot = std::make_shared<const TokenSequences>(parse_token_sequences(*b.text, format, path));
        return slot;
      }
    std::string valid;
    for (const Builtin& b : kBuiltins) valid += (valid.empty() ? "" : ", ") + std::string(kBuiltin) + b.name;
    throw std::runtime_error("'" + printable(path) + "' is not a built-in token file; valid: " + valid);
  }
  // A file: read again when its modification time or size changes (the window checks the settings every frame).
  // Opened without blocking and checked to be a regular file under the cap (input_file.hpp): a FIFO is
  // refused at once, not waited on.
  std::uint64_t size = 0;
  struct stat st {};
  {
    const int fd = open_input_file(path, kMaxTokenFileBytes, "the token file", size);
    const int r = ::fstat(fd, &st);
    ::close(fd);
    if (r != 0) throw std::runtime_error("cannot read the token file '" + printable(path, 200) + "'");
  }
  using Key = std::tuple<std::string, TokensFormat>;
  struct Entry {
    std::int64_t mtime_ns, size;
    std::shared_ptr<const TokenSequences> sequences;
    std::string error;
  };
  static std::mutex mutex;
  static std::map<Key, Entry> cache;
  const std::int64_t mtime = std::int64_t(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
  std::lock_guard lock(mutex);
  Entry& e = cache[{path, format}];
  if (!(e.sequences || !e.error.empty()) || e.mtime_ns != mtime || e.size != std::int64_t(size)) {
    e = Entry{mtime, std::int64_t(size), nullptr, ""};
    const std::string text = read_input_file(path, kMaxTokenFileBytes, "the token file");
    try {
      e.sequences = std::make_shared<const TokenSequences>(parse_token_sequences(text, format, path));
    } catch (const std::runtime_error& error) { e.error = error.what(); }
  }
  if (!e.error.empty()) throw std::runtime_error(e.error);
  return e.sequences;
}

std::vector<SettingError> check_token_file(const Settings& s) {
  if (s.tokens.empty()) return {};
  std::shared_ptr<const TokenSequences> t;
  try {
    t = load_token_sequences(s.tokens, s.tokens_format);
  } catch (const std::runtime_error& e) { return {{"tokens", e.what()}}; }
  std::vector<SettingError> errors;
  const int want = s.n - (s.fixed_first_token() ? 1 : 0);
  if (t->length != want) {
    std::string msg = printable(s.tokens, 200) + ": every line has " + std::to_string(t->length) +
                      " tokens; n = " + std::to_string(s.n) + " needs " + std::to_string(want);
    if (s.fixed_first_token()) msg += " (first_token fixed prepends BOS)";
    msg += "; set n = " + std::to_string(t->length + (s.fixed_first_token() ? 1 : 0));
    errors.push_back({"tokens", msg});
  }
  if (t->max_id >= s.vocab)
    errors.push_back({"tokens", printable(s.tokens, 200) + " line " + std::to_string(t->max_id_line) +
                                    " holds the id " + std::to_string(t->max_id) + ", outside the vocabulary [0, " +
                                    std::to_string(s.vocab) + "); set vocab >= " + std::to_string(t->max_id + 1)});
  return errors;
}

}  // namespace maskscope
