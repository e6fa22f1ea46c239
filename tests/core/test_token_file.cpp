// Given token sequences (docs/model.md section 11): the file's two formats and its errors, the rule that sample
// s reads line s mod lines, and the shipped files of Zuo et al.'s four tasks (`003` Sec. 4.2).
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <future>
#include <string>
#include <vector>

#include "core/kernel/simulator.hpp"
#include "core/model/token_file.hpp"
#include "core/run/runner.hpp"
#include "random_weights_helpers.hpp"

using namespace maskscope;

namespace {

std::string message_of(std::string_view text, TokensFormat format) {
  try {
    parse_token_sequences(text, format, "f.txt");
  } catch (const std::runtime_error& e) { return e.what(); }
  return "";
}

std::string write_file(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / ("maskscope_tokens_" + name);
  std::ofstream(path) << text;
  return path.string();
}

Settings fixed_network_with(const std::string& tokens, std::int64_t samples) {
  Settings s = test::random_weights(6, 16, 2, 2, samples);
  s.vocab = 7;
  s.weights = WeightsMode::fixed;
  s.tokens = tokens;
  s.threads = 2;
  return s;
}

}  // namespace

TEST_CASE("token files: ids and characters, one sequence per line") {
  const TokenSequences ids = parse_token_sequences("0 1 2\n3  4\t5\r\n", TokensFormat::ids, "f");
  CHECK(ids.lines == 2);
  CHECK(ids.length == 3);
  CHECK(ids.ids == std::vector<std::int64_t>{0, 1, 2, 3, 4, 5});
  CHECK(ids.max_id == 5);
  CHECK(ids.line_of(3) == ids.ids.data() + 3);  // sample 3 -> line 1
  const TokenSequences chars = parse_token_sequences("a1 ~\n", TokensFormat::chars, "f");
  CHECK(chars.ids == std::vector<std::int64_t>{65, 17, 0, 94});  // id = ASCII code - 32
}

TEST_CASE("token files: every malformed file is refused naming the file, the line and what is valid") {
  CHECK(message_of("", TokensFormat::ids) == "f.txt holds no token sequence (an empty file); one sequence per line");
  CHECK(message_of("1 2\n\n", TokensFormat::ids) == "f.txt line 2 is empty; every line holds one sequence of tokens");
  CHECK(message_of("1 2\n1 2 3\n", TokensFormat::ids) ==
        "f.txt line 2 has 3 tokens, line 1 2; every line needs the same length");
  CHECK(message_of("1 x2\n", TokensFormat::ids)
            .find("f.txt line 1, token 2: 'x2' is not a token id; valid: whole "
                  "numbers in [0, 10^9)") == 0);
  CHECK(message_of("1 -2\n", TokensFormat::ids).find("'-2' is not a token id") != std::string::npos);
  CHECK(message_of("1 2.5\n", TokensFormat::ids).find("'2.5' is not a token id") != std::string::npos);
  CHECK(message_of("ab\tc\n", TokensFormat::chars).find("f.txt line 1, character 3 (byte 9) is not printable ASCII") ==
        0);
}

TEST_CASE("token files: a message quotes the file's bytes escaped, escape sequences and NULs included") {
  using namespace std::string_literals;
  const std::string text = "1 2 \x1b[2J\0x 3\n"s;  // an ANSI clear-screen, then a NUL inside the same word
  const std::string path = write_file("escape.txt", text);
  Settings s = fixed_network_with(path, 4);
  s.n = 3;
  const auto errors = validate(s);
  REQUIRE(errors.size() == 1);
  const std::string& m = errors[0].message;
  CHECK(m.find("token 3: '\\x1b[2J\\x00x' is not a token id") != std::string::npos);
  CHECK(m.find('\x1b') == std::string::npos);
  CHECK(m.find('\0') == std::string::npos);
  // The file's name is quoted escaped too.
  const std::string odd = write_file("name\x1b[0m.txt", text);
  s.tokens = odd;
  const auto named = validate(s);
  REQUIRE(named.size() == 1);
  CHECK(named[0].message.find("name\\x1b[0m.txt") != std::string::npos);
  CHECK(named[0].message.find('\x1b') == std::string::npos);
}

TEST_CASE("token files: a FIFO is refused at once, not waited on for a writer") {
  const auto fifo = std::filesystem::temp_directory_path() / "maskscope_tokens_fifo";
  std::filesystem::remove(fifo);
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  auto load = std::async(std::launch::async, [&]() -> std::string {
    try {
      load_token_sequences(fifo.string(), TokensFormat::ids);
    } catch (const std::exception& e) { return e.what(); }
    return "accepted";
  });
  const bool at_once = load.wait_for(std::chrono::seconds(5)) == std::future_status::ready;
  if (!at_once) {  // a reader stuck in open(): a writer that opens and closes lets it go, so the test ends
    const int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
    if (fd >= 0) ::close(fd);
  }
  CHECK(at_once);
  const std::string message = load.get();
  CHECK(message.find("is not a regular file (a FIFO") != std::string::npos);
  std::filesystem::remove(fifo);
}

TEST_CASE("tokens: checked against n, the vocabulary and the model family") {
  const std::string path = write_file("check.txt", "0 1 2 3 4 5\n6 5 4 3 2 1\n");
  Settings s = fixed_network_with(path, 4);
  CHECK(validate(s).empty());
  s.vocab = 6;
  auto errors = validate(s);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].setting == "tokens");
  CHECK(errors[0].message == path + " line 2 holds the id 6, outside the vocabulary [0, 6); set vocab >= 7");
  s.vocab = 7;
  s.n = 7;
  errors = validate(s);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].message == path + ": every line has 6 tokens; n = 7 needs 7; set n = 6");
  s.first_token = FirstToken::fixed;  // BOS + the line's 6 tokens
  CHECK(validate(s).empty());
  s.tokens = path + ".missing";
  errors = validate(s);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].message.find("the token file '" + path + ".missing' does not exist") == 0);
  Settings pf;
  pf.tokens = path;
  errors = validate(pf);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].setting == "tokens");
  CHECK(errors[0].message.find("use model random_weights") != std::string::npos);
}

TEST_CASE("tokens: sample s reads line s mod lines (with BOS in front when the first token is fixed)") {
  const std::string path = write_file("lines.txt", "0 1 2 3 4 5\n6 6 6 6 6 6\n5 4 3 2 1 0\n");
  for (const FirstToken first : {FirstToken::none, FirstToken::fixed}) {
    Settings s = fixed_network_with(path, 6);
    s.first_token = first;
    if (first == FirstToken::fixed) {
      s.n = 7;
      s.tokens = write_file("lines6.txt", "0 1 2 3 4 5\n6 6 6 6 6 6\n5 4 3 2 1 0\n");
    }
    Simulator sim(s);
    const auto traces = sim.trace_block(4, 3);  // samples 4, 5, 6: lines 1, 2, 0
    const int o = first == FirstToken::fixed ? 1 : 0;
    CHECK(traces[0].tokens[std::size_t(o)] == 6);
    CHECK(traces[1].tokens[std::size_t(o)] == 5);
    CHECK(traces[2].tokens[std::size_t(o) + 1] == 1);
    if (o) CHECK(traces[0].tokens[0] == s.vocab);
  }
}

TEST_CASE("tokens: permuting the lines gives the same means; equal lines give zero spread (fixed network)") {
  std::vector<std::string> lines;
  for (int l = 0; l < 8; ++l) {
    std::string line;
    for (int i = 0; i < 6; ++i) line += std::to_string((l * 5 + i * 3 + l * i) % 7) + (i < 5 ? " " : "");
    lines.push_back(line);
  }
  auto join = [](const std::vector<std::string>& v) {
    std::string t;
    for (const auto& l : v) t += l + "\n";
    return t;
  };
  std::vector<std::string> permuted = lines;
  std::rotate(permuted.begin(), permuted.begin() + 3, permuted.end());
  std::swap(permuted[0], permuted[5]);
  const auto a = run_to_completion(fixed_network_with(write_file("order_a.txt", join(lines)), 32));
  const auto b = run_to_completion(fixed_network_with(write_file("order_b.txt", join(permuted)), 32));
  for (std::size_t l = 0; l < a->layers.size(); ++l) {
    const LayerStats &x = a->layers[l], &y = b->layers[l];
    // The same 32 samples in another order: the same values summed in another order (double sums of floats).
    CHECK(std::abs(x.adjacency.mean - y.adjacency.mean) < 1e-12);
    CHECK(std::abs(x.rp.mean - y.rp.mean) < 1e-12);
    for (int i = 0; i < 6; ++i)
      for (int j = 0; j <= i; ++j) {
        CHECK(std::abs(x.score_mean(i, j) - y.score_mean(i, j)) <= 1e-12 * (1 + std::abs(x.score_mean(i, j))));
        CHECK(std::abs(x.cosine_mean(i, j) - y.cosine_mean(i, j)) <= 1e-12);
      }
  }
  // Every line the same: every sample the same sequence through the same network, so no spread at all.
  const auto same = run_to_completion(fixed_network_with(write_file("same.txt", join({lines[2], lines[2]})), 16));
  for (const LayerStats& l : same->layers) {
    // The block sums' sum of squares minus the square of the sum leaves rounding of a few 1e-9 (a ratio
    // of counts such as 0.6 is not exact in binary); the maps' cells come out exactly 0.
    CHECK(l.adjacency.se < 1e-8);
    for (int i = 0; i < 6; ++i) CHECK(l.weight_se(i, 0) == 0.0);
  }
}

TEST_CASE("the shipped token files of Zuo et al.'s tasks: 256 prompts each, of the paper's formats") {
  const struct {
    const char* name;
    int length;
    char first, last;
  } tasks[] = {{"zuo-addition", 8, '1', '='},
               {"zuo-reversal", 22, 'r', '='},
               {"zuo-indexing", 20, 'w', '='},
               {"zuo-ordering", 19, 'o', '='}};
  CHECK(builtin_token_files().size() == 4);
  for (const auto& t : tasks) {
    INFO(t.name);
    const auto seq = load_token_sequences(std::string("builtin:") + t.name, TokensFormat::chars);
    CHECK(seq->lines == 256);
    CHECK(seq->length == t.length);
    CHECK(seq->ids[std::size_t(t.length - 1)] == t.last - 32);
    CHECK(seq->max_id < kCharVocabulary);
  }
}
