// Zuo et al.'s four tasks and token-file corpora as training data, and their batches (tasks.hpp).
#include "core/train/tasks.hpp"

#include <algorithm>
#include <stdexcept>
#include <unordered_set>

#include "core/model/input_file.hpp"
#include "core/model/token_file.hpp"
#include "core/random/random_stream.hpp"

namespace maskscope {

namespace {

// Uniform integer in [0, v) (Lemire's multiply-shift, as the kernel draws token ids).
int below(SampleStream& rng, int v) {
  __extension__ typedef unsigned __int128 u128;
  return int((u128(rng.next()) * std::uint64_t(v)) >> 64);
}

char digit(int d) { return char('0' + d); }

// One prompt of `task` from `rng`, in the format of tools/zuo_tasks.py (`003` Sec. 4.2's examples).
std::string draw_prompt(Task task, SampleStream& rng) {
  std::string p;
  switch (task) {
    case Task::addition: {  // "123+456=": operands 100..999
      const int a = 100 + below(rng, 900), b = 100 + below(rng, 900);
      p = std::to_string(a) + "+" + std::to_string(b) + "=";
      break;
    }
    case Task::reversal: {  // "rev(1234567890123456)=": 16 digits, the first nonzero
      p = "rev(";
      p += digit(1 + below(rng, 9));
      for (int k = 1; k < 16; ++k) p += digit(below(rng, 10));
      p += ")=";
      break;
    }
    case Task::indexing: {  // "wherex(134504392,4)=": 9 digits and one of them
      std::string seq;
      for (int k = 0; k < 9; ++k) seq += digit(below(rng, 10));
      p = "wherex(" + seq + "," + seq[std::size_t(below(rng, 9))] + ")=";
      break;
    }
    case Task::ordering: {  // "order(67812,28716)=": 5 distinct digits and a permutation of them
      std::string pool = "0123456789";
      for (int k = 0; k < 5; ++k) std::swap(pool[std::size_t(k)], pool[std::size_t(k + below(rng, 10 - k))]);
      const std::string seq = pool.substr(0, 5);
      std::string perm = seq;
      for (int k = 4; k > 0; --k) std::swap(perm[std::size_t(k)], perm[std::size_t(below(rng, k + 1))]);
      p = "order(" + seq + "," + perm + ")=";
      break;
    }
  }
  return p;
}

[[noreturn]] void bad_prompt(Task task, std::string_view prompt) {
  throw std::invalid_argument("'" + printable(prompt) + "' is not a " + std::string(enum_name(kTaskNames, task)) +
                              " prompt");
}

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// "HEAD(X,Y)=" split into X and Y.
std::pair<std::string_view, std::string_view> two_lists(Task task, std::string_view prompt, std::string_view head) {
  if (prompt.substr(0, head.size()) != head || prompt.size() < head.size() + 2 ||
      prompt.substr(prompt.size() - 2) != ")=")
    bad_prompt(task, prompt);
  const std::string_view inner = prompt.substr(head.size(), prompt.size() - head.size() - 2);
  const auto comma = inner.find(',');
  if (comma == std::string_view::npos) bad_prompt(task, prompt);
  return {inner.substr(0, comma), inner.substr(comma + 1)};
}

std::int32_t char_id(char c) { return std::int32_t(static_cast<unsigned char>(c)) - 32; }

// Position i's target: the token at i + 1 where `loss_from` <= i, else -1; the last position has none.
void fill_targets(const std::int32_t* tokens, int n, int loss_from, std::int32_t* targets) {
  for (int i = 0; i < n; ++i) targets[i] = (i >= loss_from && i + 1 < n) ? tokens[i + 1] : -1;
}

// The first position whose next token carries a loss.
int loss_from(const TrainingData& data) { return data.task ? data.prompt_length - 1 : 0; }

TokenBatch rows_of(const TrainingData& data, const std::vector<std::int32_t>& set, const std::int64_t* index,
                   int rows) {
  TokenBatch b;
  b.rows = rows;
  b.n = data.n;
  b.tokens.resize(std::size_t(rows) * std::size_t(data.n));
  b.targets.resize(b.tokens.size());
  const int from = loss_from(data);
  for (int r = 0; r < rows; ++r) {
    const std::size_t dst = std::size_t(r) * std::size_t(data.n);
    std::copy_n(set.data() + std::size_t(index[r]) * std::size_t(data.n), data.n, b.tokens.data() + dst);
    fill_targets(b.tokens.data() + dst, data.n, from, b.targets.data() + dst);
  }
  return b;
}

}  // namespace

Task task_from_name(std::string_view name) {
  if (const auto t = enum_value(kTaskNames, name)) return *t;
  throw std::runtime_error("unknown task '" + printable(name) + "'; valid: " + enum_names_text(kTaskNames));
}

TaskShape task_shape(Task task) {
  switch (task) {
    case Task::addition: return {8, 4};
    case Task::reversal: return {22, 16};
    case Task::indexing: return {20, 1};
    case Task::ordering: return {19, 5};
  }
  return {0, 0};
}

std::string task_answer(Task task, std::string_view prompt) {
  switch (task) {
    case Task::addition: {
      const auto plus = prompt.find('+');
      if (plus == std::string_view::npos || prompt.empty() || prompt.back() != '=') bad_prompt(task, prompt);
      const std::string_view a = prompt.substr(0, plus), b = prompt.substr(plus + 1, prompt.size() - plus - 2);
      if (!all_digits(a) || !all_digits(b) || a.size() > 3 || b.size() > 3) bad_prompt(task, prompt);
      std::string sum = std::to_string(std::stoi(std::string(a)) + std::stoi(std::string(b)));
      sum.insert(0, 4 - sum.size(), '0');  // 4 digits, then least significant first (Lee et al.'s reversed answer)
      return {sum.rbegin(), sum.rend()};
    }
    case Task::reversal: {
      if (prompt.substr(0, 4) != "rev(" || prompt.size() < 7 || prompt.substr(prompt.size() - 2) != ")=")
        bad_prompt(task, prompt);
      const std::string_view digits = prompt.substr(4, prompt.size() - 6);
      if (!all_digits(digits)) bad_prompt(task, prompt);
      return {digits.rbegin(), digits.rend()};
    }
    case Task::indexing: {
      const auto [seq, query] = two_lists(task, prompt, "wherex(");
      if (!all_digits(seq) || query.size() != 1 || !all_digits(query)) bad_prompt(task, prompt);
      const auto at = seq.find(query[0]);
      if (at == std::string_view::npos || at > 9) bad_prompt(task, prompt);
      return std::string(1, digit(int(at)));
    }
    case Task::ordering: {
      const auto [seq, perm] = two_lists(task, prompt, "order(");
      if (!all_digits(seq) || seq.size() != perm.size() || seq.size() > 10) bad_prompt(task, prompt);
      std::string out;
      for (const char c : perm) {
        const auto at = seq.find(c);
        if (at == std::string_view::npos) bad_prompt(task, prompt);
        out += digit(int(at));
      }
      return out;
    }
  }
  bad_prompt(task, prompt);
}

std::string task_evaluation_tokens(Task task) { return "builtin:zuo-" + std::string(enum_name(kTaskNames, task)); }

TrainingData make_task_data(Task task, std::uint64_t seed, std::int32_t bos_id, int train_count, int test_count) {
  if (train_count < 1 || test_count < 1)
    throw std::runtime_error("a task needs at least 1 training and 1 test sequence");
  const TaskShape shape = task_shape(task);
  const int bos = bos_id >= 0 ? 1 : 0;
  TrainingData data;
  data.name = std::string(enum_name(kTaskNames, task));
  data.task = true;
  data.bos_id = bos_id;
  data.n = bos + shape.prompt_length + shape.answer_length;
  data.prompt_length = bos + shape.prompt_length;
  data.answer_length = shape.answer_length;
  data.vocab = kCharVocabulary;
  // The evaluation prompts are taken from the start: neither set holds one.
  std::unordered_set<std::string> seen;
  const auto eval = load_token_sequences(task_evaluation_tokens(task), TokensFormat::chars);
  for (int line = 0; line < eval->lines; ++line) {
    std::string p;
    for (int k = 0; k < eval->length; ++k) p += char(eval->line_of(std::uint64_t(line))[k] + 32);
    seen.insert(p);
  }
  const std::int64_t want = std::int64_t(train_count) + test_count;
  data.train.reserve(std::size_t(train_count) * std::size_t(data.n));
  data.test.reserve(std::size_t(test_count) * std::size_t(data.n));
  std::int64_t kept = 0;
  // Every task has far more distinct prompts than 40,000 (addition the fewest: 810,000); the bound stops a
  // request for more sequences than the task has.
  for (std::uint64_t k = 0; kept < want; ++k) {
    if (k > std::uint64_t(want) * 64 + 1'000'000)
      throw std::runtime_error(data.name + ": cannot draw " + std::to_string(want) + " distinct prompts");
    SampleStream rng(seed, k);
    std::string prompt = draw_prompt(task, rng);
    if (!seen.insert(prompt).second) continue;
    const std::string sequence = prompt + task_answer(task, prompt);
    std::vector<std::int32_t>& set = kept < train_count ? data.train : data.test;
    if (bos) set.push_back(bos_id);
    for (const char c : sequence) set.push_back(char_id(c));
    ++kept;
  }
  return data;
}

TrainingData make_corpus_data(const std::string& path, TokensFormat format, std::int32_t bos_id) {
  const auto seqs = load_token_sequences(path, format);
  if (seqs->lines < 2)
    throw std::runtime_error(printable(path, 200) +
                             " has 1 line; a corpus needs at least 2 (the last 10% of the lines, at least 1, are "
                             "the test set)");
  if (seqs->max_id >= std::int64_t(1) << 30)
    throw std::runtime_error(printable(path, 200) + " line " + std::to_string(seqs->max_id_line) + " holds the id " +
                             std::to_string(seqs->max_id) + "; training takes ids below 2^30");
  const int bos = bos_id >= 0 ? 1 : 0;
  TrainingData data;
  data.name = path;
  data.bos_id = bos_id;
  data.n = bos + seqs->length;
  data.vocab = format == TokensFormat::chars ? kCharVocabulary : seqs->max_id + 1;
  const int test_lines = std::max(1, int((seqs->lines * kCorpusTestFraction) + 0.999999));
  const int train_lines = seqs->lines - test_lines;
  for (int line = 0; line < seqs->lines; ++line) {
    std::vector<std::int32_t>& set = line < train_lines ? data.train : data.test;
    if (bos) set.push_back(bos_id);
    const std::int64_t* ids = seqs->line_of(std::uint64_t(line));
    for (int k = 0; k < seqs->length; ++k) set.push_back(std::int32_t(ids[k]));
  }
  return data;
}

TokenBatch train_batch(const TrainingData& data, std::uint64_t seed, std::uint64_t step, int rows) {
  const std::int64_t count = data.train_rows();
  if (rows < 1 || count < 1) throw std::runtime_error("train_batch: no rows to draw");
  SampleStream rng(seed, step);
  std::vector<std::int64_t> index(std::size_t(rows), 0);
  __extension__ typedef unsigned __int128 u128;
  for (std::int64_t& i : index) i = std::int64_t((u128(rng.next()) * std::uint64_t(count)) >> 64);
  return rows_of(data, data.train, index.data(), rows);
}

TokenBatch test_batch(const TrainingData& data, std::int64_t first, int rows) {
  const std::int64_t count = data.test_rows();
  const int take = int(std::clamp<std::int64_t>(count - first, 0, std::max(rows, 0)));
  std::vector<std::int64_t> index(static_cast<std::size_t>(take));
  for (int r = 0; r < take; ++r) index[std::size_t(r)] = first + r;
  return rows_of(data, data.test, index.data(), take);
}

bool exact_match(const TokenBatch& batch, int row, std::span<const std::int32_t> predicted) {
  const std::size_t at = std::size_t(row) * std::size_t(batch.n);
  for (int i = 0; i < batch.n; ++i)
    if (batch.targets[at + std::size_t(i)] >= 0 && predicted[at + std::size_t(i)] != batch.targets[at + std::size_t(i)])
      return false;
  return true;
}

bool answer_correct(const TrainingData& data, std::int64_t test_index, std::span<const std::int32_t> answer) {
  if (!data.task || test_index < 0 || test_index >= data.test_rows() || int(answer.size()) != data.answer_length)
    return false;
  const std::int32_t* row = data.test.data() + std::size_t(test_index) * std::size_t(data.n);
  return std::equal(answer.begin(), answer.end(), row + data.prompt_length);
}

}  // namespace maskscope
