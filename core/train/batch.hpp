// What the training engine (core/train/, issue 49) reads from its data (core/train/tasks.*): a batch of
// token sequences with, per position, the token the model should predict next (docs/model.md, training).
#pragma once

#include <cstdint>
#include <vector>

namespace maskscope {

// `rows` sequences of n tokens each, row-major. Token ids are < the model's vocabulary V, except the BOS id V
// at position 0 with a fixed first token. targets[r n + i] is the id of the token that follows position i
// in row r (the next-token target), or -1 where no loss is taken (prompt positions of a task, padding).
struct TokenBatch {
  int rows = 0;
  int n = 0;
  std::vector<std::int32_t> tokens;   // rows x n
  std::vector<std::int32_t> targets;  // rows x n, -1: no loss at that position
};

}  // namespace maskscope
