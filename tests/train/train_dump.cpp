// The training engine's side of tests/python/train_torch.py: builds a small network from key=value settings,
// runs the engine and writes what PyTorch needs to redo it (parameters, batches, RoPE tables) and what the
// engine got (gradients, losses, final parameters) as .npy files into a folder.
//   train_dump grad  DIR key=value ...   one forward and backward pass: g__NAME.npy, loss.npy
//   train_dump adamw DIR key=value ...   20 AdamW steps: losses.npy, f__NAME.npy (after the last step)
// Optimizer keys: lr, warmup, decay_steps, weight_decay, grad_clip, steps, batch; every other key is a setting.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/formats/npy.hpp"
#include "core/model/rope.hpp"
#include "core/model/settings_text.hpp"
#include "core/random/random_stream.hpp"
#include "core/train/parameters.hpp"
#include "core/train/train_pass.hpp"
#include "core/train/trainer.hpp"

using namespace maskscope;

namespace {

void write(const std::string& dir, const std::string& name, const std::vector<float>& v) {
  std::string error;
  if (!write_npy_f32(dir + "/" + name + ".npy", {std::int64_t(v.size())}, v.data(), error))
    throw std::runtime_error(error);
}

void write_network(const std::string& dir, const std::string& prefix, const Network& net) {
  train::for_each_tensor(net, [&](const std::string& name, const std::vector<float>& v, bool) {
    if (!v.empty()) write(dir, prefix + name, v);
  });
}

// `rows` sequences of random ids below `ids` (BOS at 0 with a fixed first token), targets the next token, -1 on
// the first third of positions (a prompt) and the last.
TokenBatch random_batch(const Settings& s, int rows, std::uint64_t step) {
  TokenBatch b;
  b.rows = rows;
  b.n = s.n;
  SampleStream rng(99, step);
  for (int r = 0; r < rows; ++r)
    for (int i = 0; i < s.n; ++i)
      b.tokens.push_back(s.fixed_first_token() && i == 0 ? std::int32_t(s.vocab)
                                                         : std::int32_t(rng.next() % std::uint64_t(s.vocab)));
  for (int r = 0; r < rows; ++r)
    for (int i = 0; i < s.n; ++i)
      b.targets.push_back(i < s.n / 3 || i + 1 == s.n ? -1 : b.tokens[std::size_t(r) * s.n + i + 1]);
  return b;
}

std::vector<float> as_floats(const std::vector<std::int32_t>& v) { return {v.begin(), v.end()}; }

}  // namespace

int main(int argc, char** argv) try {
  if (argc < 3) {
    std::fprintf(stderr, "usage: train_dump grad|adamw DIR key=value ...\n");
    return 2;
  }
  const std::string mode = argv[1], dir = argv[2];
  Settings s;
  s.model = Model::random_weights;
  s.weights = WeightsMode::fixed;
  s.gamma = 1.0;
  s.vocab = 11;
  train::OptimizerSettings o;
  int steps = 20, batch = 6;
  for (int a = 3; a < argc; ++a) {
    const std::string arg = argv[a];
    const auto eq = arg.find('=');
    const std::string key = arg.substr(0, eq), value = arg.substr(eq + 1);
    if (key == "lr") o.lr = std::stod(value);
    else if (key == "warmup") o.warmup = std::stoll(value);
    else if (key == "decay_steps") o.decay_steps = std::stoll(value);
    else if (key == "weight_decay") o.weight_decay = std::stod(value);
    else if (key == "grad_clip") o.grad_clip = std::stod(value);
    else if (key == "steps") steps = std::stoi(value);
    else if (key == "batch") batch = std::stoi(value);
    else setting_from_text(key, value, s);
  }
  if (const auto errors = validate(s); !errors.empty())
    throw std::runtime_error(errors.front().setting + ": " + errors.front().message);
  nlohmann::json config = {{"n", s.n},
                           {"d", s.d},
                           {"layers", s.layers},
                           {"heads", s.heads},
                           {"vocab_rows", s.vocab + (s.fixed_first_token() ? 1 : 0)},
                           {"norm", to_string(s.norm)},
                           {"gamma", s.gamma},
                           {"mlp", s.mlp},
                           {"rope", s.rope()},
                           {"positions", s.learned_positions()},
                           {"lr", o.lr},
                           {"min_lr_ratio", o.min_lr_ratio},
                           {"warmup", o.warmup},
                           {"decay_steps", o.decay_steps},
                           {"beta1", o.beta1},
                           {"beta2", o.beta2},
                           {"eps", o.eps},
                           {"weight_decay", o.weight_decay},
                           {"grad_clip", o.grad_clip},
                           {"steps", steps},
                           {"batch", batch}};
  std::ofstream(dir + "/config.json") << config.dump(1);
  if (s.rope()) {
    const RopeTables t = rope_tables(s.n, s.head_width(), s.rope_base, s.rope_scramble);
    write(dir, "rope_cos_a", t.cos_a);
    write(dir, "rope_sin_a", t.sin_a);
    write(dir, "rope_cos_b", t.cos_b);
    write(dir, "rope_sin_b", t.sin_b);
  }
  if (mode == "grad") {
    Network net = train::initial_network(s);
    // Gains and biases away from 1 and 0, so that their gradients and their effect are both checked.
    SampleStream rng(7, 0);
    train::for_each_tensor(net, [&](const std::string& name, std::vector<float>& v, bool decay) {
      if (decay || v.empty()) return;
      std::vector<float> z(v.size());
      rng.normals(z.data(), z.size());
      for (std::size_t e = 0; e < v.size(); ++e) v[e] += 0.3f * z[e];
      (void)name;
    });
    const TokenBatch b = random_batch(s, batch, 0);
    train::TrainPass pass(s, batch);
    const train::LossSum loss = pass.forward(net, b.tokens.data(), b.targets.data(), batch);
    Network grad = train::zeros_like(net);
    pass.backward(net, float(1.0 / double(loss.count)), grad);
    write_network(dir, "p__", net);
    write_network(dir, "g__", grad);
    write(dir, "tokens", as_floats(b.tokens));
    write(dir, "targets", as_floats(b.targets));
    write(dir, "loss", {float(loss.sum / double(loss.count))});
    return 0;
  }
  if (mode == "adamw") {
    train::Trainer trainer(s, o, batch, 2);
    write_network(dir, "p__", trainer.parameters());
    std::vector<float> tokens, targets, losses;
    for (int t = 0; t < steps; ++t) {
      const TokenBatch b = random_batch(s, batch, std::uint64_t(t));
      tokens.insert(tokens.end(), b.tokens.begin(), b.tokens.end());
      targets.insert(targets.end(), b.targets.begin(), b.targets.end());
      losses.push_back(float(trainer.train_step(b).loss));
    }
    write_network(dir, "f__", trainer.parameters());
    write(dir, "tokens", tokens);
    write(dir, "targets", targets);
    write(dir, "losses", losses);
    return 0;
  }
  std::fprintf(stderr, "train_dump: unknown mode '%s' (grad | adamw)\n", mode.c_str());
  return 2;
} catch (const std::exception& e) {
  std::fprintf(stderr, "train_dump: %s\n", e.what());
  return 2;
}
