// The training data (docs/model.md, "Training data"): Zuo et al.'s four synthetic tasks (`003` Sec. 4.2) as full
// prompt + answer sequences from a seeded generator, or a token file as a language-modelling corpus, and the
// batches the training engine reads (TokenBatch, batch.hpp): deterministic from (data, seed, step, rows).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/enum_names.hpp"
#include "core/model/settings.hpp"
#include "core/train/batch.hpp"

namespace maskscope {

enum class Task { addition, reversal, indexing, ordering };
inline constexpr EnumTable<Task, 4> kTaskNames{{{Task::addition, "addition"},
                                                {Task::reversal, "reversal"},
                                                {Task::indexing, "indexing"},
                                                {Task::ordering, "ordering"}}};

// The task named `name`; throws std::runtime_error "unknown task 'x'; valid: addition, reversal, indexing, ordering".
Task task_from_name(std::string_view name);

// The fixed shape of a task's sequences, in characters (tokens_format chars: id = code - 32, docs/model.md
// section 11). Every answer has a fixed width, so no end or padding token is needed:
//   addition  "746+607=" -> "3531": the sum as 4 digits (zero-padded, 200..1998) written least significant
//             digit first (reversed, as Lee et al. train NanoGPT and `003` follows them): 1353 -> "3531"
//   reversal  "rev(9427905036355104)=" -> "4015536305097249": the 16 digits reversed
//   indexing  "wherex(461481465,8)=" -> "4": the 0-based index of the query digit's first occurrence
//   ordering  "order(54693,49635)=" -> "13240": for each digit of the second list, its index in the first
struct TaskShape {
  int prompt_length;  // 8, 22, 20, 19 (as the shipped evaluation prompts, assets/tokens/zuo-*.txt)
  int answer_length;  // 4, 16, 1, 5
};
TaskShape task_shape(Task task);

// The answer to a prompt of `task` (the prompt as the generator writes it, e.g. "order(67812,28716)=" gives
// "42130", `003` Sec. 4.2's example). Throws std::invalid_argument for a prompt not of the task's format.
std::string task_answer(Task task, std::string_view prompt);

// The built-in file of the task's 256 evaluation prompts ("builtin:zuo-reversal"): the inputs of maps and metrics
// (Table 1 averages over 256 samples). The generator never puts one of them in the training or the test set.
std::string task_evaluation_tokens(Task task);

// Sequences for training and evaluation. Every sequence has n tokens: with a BOS id (first_token fixed: id V, an
// extra embedding row) it comes first. Targets: position i's target is the token at i + 1, kept where a loss is
// taken and -1 elsewhere: a task takes its loss on the answer tokens only (positions prompt_length - 1 ..
// n - 2 predict the answer), a corpus on every next token; the last position has no next token (-1).
struct TrainingData {
  std::string name;       // the task's name, or the token file's path
  bool task = false;      // true: loss on the answer only; false: a language-modelling corpus
  int n = 0;              // tokens per sequence, with BOS
  int prompt_length = 0;  // a task's prompt tokens, with BOS (the engine feeds these and scores the answer)
  int answer_length = 0;  // a task's answer tokens (0 for a corpus)
  std::int32_t bos_id = -1;
  std::int64_t vocab = 0;  // the vocabulary the ids need: max id + 1 (95 for characters), BOS not counted
  std::vector<std::int32_t> train, test;  // rows x n, row-major
  std::int64_t train_rows() const { return n ? std::int64_t(train.size()) / n : 0; }
  std::int64_t test_rows() const { return n ? std::int64_t(test.size()) / n : 0; }
};

// Zuo et al.'s protocol: 20,000 training and 20,000 test sequences per task (`003` Sec. 4.3).
constexpr int kTaskTrainSequences = 20000, kTaskTestSequences = 20000;
// The default seed of the task generator, so that every model sees the same split (as `003` Table 3's runs share
// one train-test split); a model's own seed is another setting.
constexpr std::uint64_t kTaskDataSeed = 2024;

// The task's sequences: candidates k = 0, 1, ... drawn from stream (seed, k) (Philox, random_stream.hpp), each
// kept unless its prompt was drawn before or is an evaluation prompt; the first train_count kept form the training
// set, the next test_count the test set. So the two sets and the evaluation prompts are disjoint, no prompt
// appears twice, and the data depends on (task, seed, counts, bos_id) only. `bos_id` -1: no BOS.
TrainingData make_task_data(Task task, std::uint64_t seed = kTaskDataSeed, std::int32_t bos_id = -1,
                            int train_count = kTaskTrainSequences, int test_count = kTaskTestSequences);

// A token file (token_file.hpp: one sequence per line, ids or chars, every line of one length; builtin:NAME too)
// as a corpus: the last ceil(10%) of its lines are the test set, the others the training set (at least 2 lines).
// Throws std::runtime_error naming the file.
constexpr double kCorpusTestFraction = 0.1;
TrainingData make_corpus_data(const std::string& path, TokensFormat format, std::int32_t bos_id = -1);

// Training batch `step` of `rows` sequences: row r is training sequence uniform_below(train_rows) drawn from
// stream (seed, step) (with replacement, as NanoGPT's get_batch), so it depends on (data, seed, step, rows) only,
// never on threads or on earlier steps (a resumed run draws the same batches).
TokenBatch train_batch(const TrainingData& data, std::uint64_t seed, std::uint64_t step, int rows);
// Test sequences first .. first + rows - 1 in their fixed order (rows cut at the end of the set).
TokenBatch test_batch(const TrainingData& data, std::int64_t first, int rows);

// Whether row `row` of `batch` is answered exactly: `predicted` (rows x n, the argmax next token at every
// position, as the engine computes it in one forward pass) equals the target at every position with a target.
// For a task this is the exact match of the greedy answer: each answer token is predicted from a prefix that
// greedy decoding would have produced as long as the answer so far is right, and one wrong token fails both.
bool exact_match(const TokenBatch& batch, int row, std::span<const std::int32_t> predicted);
// Whether a generated answer (answer_length token ids) is test sequence `test_index`'s answer.
bool answer_correct(const TrainingData& data, std::int64_t test_index, std::span<const std::int32_t> answer);

}  // namespace maskscope
