// The training data (core/train/tasks.hpp): Zuo et al.'s four tasks (`003` Sec. 4.2) with the paper's own
// examples, 20,000 + 20,000 disjoint sequences per task, determinism, answer-only loss masks, batches, and a token
// file as a corpus with a held-out tail.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "core/model/token_file.hpp"
#include "core/train/tasks.hpp"

using namespace maskscope;

namespace {

std::string row_text(const std::vector<std::int32_t>& set, int n, std::int64_t row, int from, int count) {
  std::string s;
  for (int k = from; k < from + count; ++k) s += char(set[std::size_t(row) * std::size_t(n) + std::size_t(k)] + 32);
  return s;
}

}  // namespace

TEST_CASE("tasks: the answers of the paper's examples (003 Sec. 4.2)") {
  CHECK(task_answer(Task::indexing, "wherex(134504392,4)=") == "2");
  CHECK(task_answer(Task::ordering, "order(67812,28716)=") == "42130");
  CHECK(task_answer(Task::reversal, "rev(1234)=") == "4321");
  CHECK(task_answer(Task::reversal, "rev(8502251258017069)=") == "9607108521522058");  // Fig. 1's sample
  // Addition: the sum as 4 digits, least significant first (Lee et al.'s reversed answer).
  CHECK(task_answer(Task::addition, "123+456=") == "9750");
  CHECK(task_answer(Task::addition, "999+999=") == "8991");
  CHECK(task_answer(Task::addition, "746+607=") == "3531");
  // Malformed prompts are refused, not answered.
  CHECK_THROWS_AS(task_answer(Task::indexing, "wherex(123,7)="), std::invalid_argument);
  CHECK_THROWS_AS(task_answer(Task::ordering, "order(123,12)="), std::invalid_argument);
  CHECK_THROWS_AS(task_answer(Task::addition, "12-45="), std::invalid_argument);
}

TEST_CASE("tasks: an unknown task is refused listing the four") {
  CHECK(task_from_name("reversal") == Task::reversal);
  CHECK_THROWS_WITH_AS(task_from_name("sorting"),
                       "unknown task 'sorting'; valid: addition, reversal, indexing, ordering", std::runtime_error);
}

TEST_CASE("tasks: the shipped evaluation prompts have each task's prompt length and answerable formats") {
  for (const auto& [task, name] : kTaskNames) {
    const auto eval = load_token_sequences(task_evaluation_tokens(task), TokensFormat::chars);
    CHECK(eval->length == task_shape(task).prompt_length);
    std::string p;
    for (int k = 0; k < eval->length; ++k) p += char(eval->line_of(0)[k] + 32);
    CHECK(int(task_answer(task, p).size()) == task_shape(task).answer_length);
  }
}

TEST_CASE("tasks: 20,000 + 20,000 sequences, disjoint, distinct, without the evaluation prompts, answers right") {
  for (const auto& [task, name] : kTaskNames) {
    CAPTURE(name);
    const TrainingData data = make_task_data(task);
    const TaskShape shape = task_shape(task);
    REQUIRE(data.n == shape.prompt_length + shape.answer_length);
    REQUIRE(data.train_rows() == kTaskTrainSequences);
    REQUIRE(data.test_rows() == kTaskTestSequences);
    std::set<std::string> train, test;
    for (std::int64_t r = 0; r < data.train_rows(); ++r)
      train.insert(row_text(data.train, data.n, r, 0, shape.prompt_length));
    for (std::int64_t r = 0; r < data.test_rows(); ++r)
      test.insert(row_text(data.test, data.n, r, 0, shape.prompt_length));
    CHECK(train.size() == std::size_t(kTaskTrainSequences));  // no prompt twice
    CHECK(test.size() == std::size_t(kTaskTestSequences));
    std::size_t shared = 0;
    for (const std::string& p : test) shared += train.count(p);
    CHECK(shared == 0);
    const auto eval = load_token_sequences(task_evaluation_tokens(task), TokensFormat::chars);
    for (int line = 0; line < eval->lines; ++line) {
      std::string p;
      for (int k = 0; k < eval->length; ++k) p += char(eval->line_of(std::uint64_t(line))[k] + 32);
      shared += train.count(p) + test.count(p);
    }
    CHECK(shared == 0);
    // Every sequence is its prompt and that prompt's answer, in characters below the vocabulary of 95.
    for (std::int64_t r = 0; r < 50; ++r) {
      const std::string prompt = row_text(data.test, data.n, r, 0, shape.prompt_length);
      CHECK(row_text(data.test, data.n, r, shape.prompt_length, shape.answer_length) == task_answer(task, prompt));
    }
    CHECK(*std::min_element(data.train.begin(), data.train.end()) >= 0);
    CHECK(*std::max_element(data.train.begin(), data.train.end()) < kCharVocabulary);
  }
}

TEST_CASE("tasks: the data depends on the seed only, and the first sequences are the generator's formats") {
  const TrainingData a = make_task_data(Task::ordering, 7, -1, 100, 100);
  const TrainingData b = make_task_data(Task::ordering, 7, -1, 100, 100);
  const TrainingData c = make_task_data(Task::ordering, 8, -1, 100, 100);
  CHECK(a.train == b.train);
  CHECK(a.test == b.test);
  CHECK(a.train != c.train);
  const std::string first = row_text(a.train, a.n, 0, 0, a.n);
  CHECK(first.substr(0, 6) == "order(");
  CHECK(first[11] == ',');
  CHECK(first.substr(17, 2) == ")=");
  // The first 100 of a larger request are the 100 of a smaller one (candidates are drawn in order).
  const TrainingData big = make_task_data(Task::ordering, 7, -1, 200, 10);
  CHECK(std::equal(a.train.begin(), a.train.end(), big.train.begin()));
}

TEST_CASE("tasks: the loss is on the answer tokens only, each target the next token; BOS comes first") {
  const TrainingData data = make_task_data(Task::indexing, kTaskDataSeed, 95, 10, 10);
  CHECK(data.n == 1 + 20 + 1);
  CHECK(data.prompt_length == 21);
  const TokenBatch t = test_batch(data, 0, 3);
  REQUIRE(t.rows == 3);
  for (int r = 0; r < 3; ++r) {
    const std::int32_t* tok = t.tokens.data() + r * t.n;
    const std::int32_t* tgt = t.targets.data() + r * t.n;
    CHECK(tok[0] == 95);
    for (int i = 0; i < t.n; ++i) {
      CAPTURE(i);
      if (i == data.prompt_length - 1) CHECK(tgt[i] == tok[i + 1]);  // '=' predicts the answer digit
      else CHECK(tgt[i] == -1);
    }
  }
  // Reversal without BOS: 16 answer targets, positions 21 .. 36.
  const TrainingData rev = make_task_data(Task::reversal, kTaskDataSeed, -1, 5, 5);
  const TokenBatch b = train_batch(rev, 3, 0, 4);
  int with_loss = 0;
  for (int i = 0; i < b.n; ++i) with_loss += b.targets[std::size_t(i)] >= 0;
  CHECK(with_loss == 16);
  CHECK(b.targets[20] == -1);
  CHECK(b.targets[21] == b.tokens[22]);
  CHECK(b.targets[36] == b.tokens[37]);
  CHECK(b.targets[37] == -1);
}

TEST_CASE("tasks: batches depend on (seed, step, rows) only; the test set comes in order; exact match") {
  const TrainingData data = make_task_data(Task::addition, kTaskDataSeed, -1, 1000, 50);
  const TokenBatch a = train_batch(data, 11, 5, 32), b = train_batch(data, 11, 5, 32), c = train_batch(data, 11, 6, 32);
  CHECK(a.tokens == b.tokens);
  CHECK(a.targets == b.targets);
  CHECK(a.tokens != c.tokens);
  // Rows are drawn from the whole training set (32 x 20 draws over 1000 sequences reach both halves).
  std::set<std::vector<std::int32_t>> rows;
  for (int step = 0; step < 20; ++step) {
    const TokenBatch s = train_batch(data, 11, std::uint64_t(step), 32);
    for (int r = 0; r < 32; ++r) rows.insert({s.tokens.begin() + r * s.n, s.tokens.begin() + (r + 1) * s.n});
  }
  CHECK(rows.size() > 400);
  // The test set in order, cut at its end.
  const TokenBatch t = test_batch(data, 40, 20);
  CHECK(t.rows == 10);
  CHECK(std::equal(t.tokens.begin(), t.tokens.end(), data.test.begin() + 40 * data.n));
  // Exact match: the argmax at every answer position; one wrong answer digit fails the row.
  std::vector<std::int32_t> predicted(t.tokens.size(), 0);
  for (std::size_t i = 0; i < predicted.size(); ++i) predicted[i] = t.targets[i] >= 0 ? t.targets[i] : 7;
  CHECK(exact_match(t, 3, predicted));
  predicted[std::size_t(3 * t.n + data.prompt_length)] += 1;
  CHECK_FALSE(exact_match(t, 3, predicted));
  CHECK(exact_match(t, 4, predicted));
  const std::vector<std::int32_t> answer(data.test.begin() + 2 * data.n + data.prompt_length,
                                         data.test.begin() + 3 * data.n);
  CHECK(answer_correct(data, 2, answer));
  CHECK_FALSE(answer_correct(data, 3, answer));
}

TEST_CASE("tasks: a token file as a corpus: loss on every next token, the last 10% of lines held out") {
  const auto path = (std::filesystem::temp_directory_path() / "maskscope_corpus.txt").string();
  {
    std::ofstream f(path);
    for (int line = 0; line < 25; ++line) f << line << " " << line + 1 << " " << line + 2 << "\n";
  }
  const TrainingData data = make_corpus_data(path, TokensFormat::ids);
  CHECK(data.train_rows() == 22);
  CHECK(data.test_rows() == 3);  // ceil(2.5)
  CHECK(data.vocab == 27);
  CHECK(data.test[0] == 22);  // the tail, in file order
  const TokenBatch t = test_batch(data, 0, 3);
  CHECK(t.targets == std::vector<std::int32_t>{23, 24, -1, 24, 25, -1, 25, 26, -1});
  // With BOS (id 27 here): BOS predicts the first token.
  const TrainingData bos = make_corpus_data(path, TokensFormat::ids, 27);
  const TokenBatch tb = test_batch(bos, 0, 1);
  CHECK(tb.tokens == std::vector<std::int32_t>{27, 22, 23, 24});
  CHECK(tb.targets == std::vector<std::int32_t>{22, 23, 24, -1});
  {
    std::ofstream f(path);
    f << "1 2 3\n";
  }
  CHECK_THROWS_WITH_AS(make_corpus_data(path, TokensFormat::ids), doctest::Contains("needs at least 2"),
                       std::runtime_error);
  std::filesystem::remove(path);
}
