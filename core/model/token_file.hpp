// Given token sequences for the random-weight model (docs/model.md section 11): a file of one sequence per
// line, as ids or as characters, read and checked once and shared by every worker of a run.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/settings.hpp"

namespace maskscope {

struct TokenSequences {
  std::vector<std::int64_t> ids;  // lines x length, row-major
  int lines = 0, length = 0;
  std::int64_t max_id = -1;
  int max_id_line = 0;  // 1-based line of the largest id (for messages)
  // The sequence of sample s: line s mod lines.
  const std::int64_t* line_of(std::uint64_t sample) const {
    return ids.data() + std::size_t(sample % std::uint64_t(lines)) * std::size_t(length);
  }
};

// The character vocabulary of TokensFormat::chars: printable ASCII, id = code - 32 (' ' 0, '0' 16, 'A' 33,
// 'a' 65, '~' 94), so a file of characters needs vocab >= 95 at most.
constexpr int kCharVocabulary = 95;

// Parses a token file's text; `name` names it in messages. Lines end with \n (a \r before it is dropped); a
// last line without \n counts, an empty last line after the final \n does not. Throws std::runtime_error
// naming the file, the line and what is valid: no lines, an empty line, a line of another length than line 1,
// an id that is not a whole number in [0, 10^9) (ids: separated by spaces or tabs), a character outside
// printable ASCII (chars: every character is a token, spaces too).
TokenSequences parse_token_sequences(std::string_view text, TokensFormat format, const std::string& name);

// The sequences of s.tokens: a file path, or `builtin:NAME` for a file shipped in the binary
// (assets/tokens/NAME.txt, so presets work from any directory). Read once per path, format and file
// modification time, and shared. Throws std::runtime_error as parse_token_sequences, or naming a file it
// cannot read.
std::shared_ptr<const TokenSequences> load_token_sequences(const std::string& path, TokensFormat format);

// The names of the built-in token files ("zuo-addition", ...).
std::vector<std::string> builtin_token_files();

// Whether s's token file fits s: readable and well formed, every line n tokens long (n - 1 with a fixed first
// token, which prepends BOS), every id below vocab. Empty when s.tokens is empty or all is well.
std::vector<SettingError> check_token_file(const Settings& s);

}  // namespace maskscope
