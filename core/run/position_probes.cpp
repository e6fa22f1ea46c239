// Position probes on the random-weight network (position_probes.hpp).
#include "core/run/position_probes.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <mutex>
#include <cmath>
#include <string>
#include <thread>

#include "core/kernel/simulator.hpp"
#include "core/model/threading.hpp"
#include "core/model/token_file.hpp"
#include "core/model/cost.hpp"
#include "core/run/resources.hpp"

namespace maskscope {

namespace {

constexpr std::int64_t kSequencesMax = 1'000'000;

}  // namespace

std::vector<SettingError> validate_probe(const Settings& s, const ProbeRequest& r) {
  std::vector<SettingError> errors = validate(s);
  auto add = [&](std::string name, std::string message) { errors.push_back({std::move(name), std::move(message)}); };
  if (!s.random_weights())
    add("model",
        "the probes read the random-weight network's hidden states; use model random_weights (or "
        "'maskscope-cli analyze' for a real model's tensors)");
  else if (s.weights != WeightsMode::fixed)
    add("weights",
        "a probe is trained and tested on one network (Zuo et al. probe one model); per_sample weights "
        "draw a new network for every sequence. Use weights fixed");
  if (s.n < 2) add("n", "a position probe needs n >= 2 positions (n = " + std::to_string(s.n) + ")");
  if (s.hidden == HiddenState::attention)
    add("hidden", "the probes read the block outputs, the residual stream (hidden block); valid: block");
  if (r.train < 2 || r.train > kSequencesMax)
    add("train", "train = " + std::to_string(r.train) + " sequences is out of range; valid: integer in [2, 10^6]");
  if (r.test < 2 || r.test > kSequencesMax)
    add("test", "test = " + std::to_string(r.test) +
                    " sequences is out of range; valid: integer in [2, 10^6] "
                    "(the standard errors resample whole test sequences)");
  if (r.features.empty()) add("features", "no feature; valid: a comma-separated list of x, var, sim");
  // A token file of L lines gives sample s line s mod L: beyond L sequences the test prompts repeat training ones,
  // and the probe's test score would be a training score.
  if (!s.tokens.empty() && errors.empty()) {
    const std::int64_t lines = load_token_sequences(s.tokens, s.tokens_format)->lines;
    if (std::int64_t(r.train) + r.test > lines)
      add("test",
          "train + test = " + std::to_string(std::int64_t(r.train) + r.test) + " sequences, but the token file has " +
              std::to_string(lines) + " lines (sample s reads line s mod " + std::to_string(lines) +
              "): the test sequences would repeat training ones. Valid: train + test <= " + std::to_string(lines));
  }
  const ProbeOptions& o = r.probe;
  if (!(o.ridge > 0.0 && o.ridge <= 1e6)) add("ridge", "the ridge penalty must be a number in (0, 1e6]");
  if (o.kind == ProbeKind::mlp) {
    if (o.mlp_width < 1 || o.mlp_width > 4096) add("mlp-width", "the MLP's width must be an integer in [1, 4096]");
    if (o.mlp_epochs < 1 || o.mlp_epochs > 10000)
      add("mlp-epochs", "the MLP's epochs must be an integer in [1, 10000]");
    if (o.mlp_batch < 1 || o.mlp_batch > 1'000'000)
      add("mlp-batch", "the MLP's minibatch must be an integer in [1, 10^6]");
    if (!(o.mlp_learning_rate > 0.0 && o.mlp_learning_rate <= 1.0))
      add("mlp-lr", "the MLP's learning rate must be a number in (0, 1]");
  }
  if (o.bootstrap < 2 || o.bootstrap > 100000)
    add("bootstrap", "bootstrap resamples must be an integer in [2, 100000]");
  if (errors.empty()) {
    const std::uint64_t features = ProbeCollector::bytes(s.n, s.d, s.layers + 1, r);
    const std::uint64_t network = network_bytes(s);
    if (std::string why = memory_shortfall(probe_memory_bytes(s, r)); !why.empty()) {
      if (network >= features)
        add("vocab", "d = " + std::to_string(s.d) + ", vocab = " + std::to_string(s.vocab) +
                         ", layers = " + std::to_string(s.layers) + ": the fixed network (" + bytes_text(network) +
                         ", its embedding table included) and the probe's features (" + bytes_text(features) +
                         ") need " + why + ". Lower d, vocab or layers");
      else
        add("train", "train + test = " + std::to_string(r.train + r.test) + " sequences of n = " + std::to_string(s.n) +
                         ", d = " + std::to_string(s.d) + ", " + std::to_string(s.layers + 1) +
                         " layers: " + bytes_text(features) + " of features and the network (" + bytes_text(network) +
                         ") need " + why + ". Lower train, test or the features (x takes d values per token)");
    }
  }
  return errors;
}

std::uint64_t probe_memory_bytes(const Settings& s, const ProbeRequest& r) {
  // The features, the shared network (embedding table included), and per worker its buffers and the traces
  // of one block of samples (input and every layer's output, n x d; scores and weights per head, n x n).
  const std::int64_t sequences = r.train + r.test;
  const std::uint64_t threads = std::uint64_t(std::clamp<std::int64_t>(resolved_threads(s), 1, sequences));
  const std::uint64_t n = std::uint64_t(s.n), d = std::uint64_t(s.d), L = std::uint64_t(s.layers);
  const std::uint64_t traces = std::uint64_t(samples_per_block(s)) * sizeof(float) *
                               ((L + 1) * n * d * 2 + L * n * n * (2 * std::uint64_t(s.heads) + 2));
  return ProbeCollector::bytes(s.n, s.d, s.layers + 1, r) + network_bytes(s) + threads * (worker_bytes(s) + traces);
}

std::optional<ProbeTable> run_position_probes(const Settings& s, const ProbeRequest& r, const std::atomic<bool>* cancel,
                                              std::atomic<std::int64_t>* sequences_done) {
  const auto start = std::chrono::steady_clock::now();
  const int blocks = s.layers + 1;
  ProbeCollector collector(s.n, s.d, blocks, r);
  const std::int64_t sequences = r.train + r.test;
  const int threads = int(std::min<std::int64_t>(resolved_threads(s), sequences));
  // Whole blocks of the run's grid at a time: a fixed network multiplies a block's samples together
  // (random_weights_batched.hpp), so a trace per sample would repeat each block's products B times.
  const std::int64_t chunk = samples_per_block(s);
  std::atomic<std::int64_t> next{0};
  // A worker's failure (std::bad_alloc, ...) stops the others and is rethrown here once every thread is
  // joined: no exception leaves a thread (std::terminate) or unwinds past a joinable one.
  std::atomic<bool> failed{false};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto work = [&] {
    Simulator sim(s);
    for (std::int64_t q0; (q0 = next.fetch_add(chunk)) < sequences;) {
      if (failed.load(std::memory_order_relaxed)) return;
      if (cancel && cancel->load(std::memory_order_relaxed)) return;
      const std::int64_t count = std::min(chunk, sequences - q0);
      const std::vector<SampleTrace> traces = sim.trace_block(std::uint64_t(q0), count);
      for (std::int64_t t = 0; t < count; ++t) {
        const SampleTrace& trace = traces[std::size_t(t)];  // layer 0 the embeddings
        collector.add_sequence(q0 + t, 0, trace.input.data());
        for (int l = 0; l < s.layers; ++l)
          collector.add_sequence(q0 + t, l + 1, trace.layers[std::size_t(l)].output.data());
        if (sequences_done) sequences_done->fetch_add(1);
      }
    }
  };
  auto worker = [&] {
    try {
      work();
    } catch (...) {
      std::lock_guard lock(failure_mutex);
      if (!failure) failure = std::current_exception();
      failed.store(true);
    }
  };
  {
    JoiningThreads pool;  // joined when the block ends, on every path
    for (int k = 1; k < threads; ++k) pool.start(worker);
    worker();
  }
  if (failure) std::rethrow_exception(failure);
  if (cancel && cancel->load()) return std::nullopt;
  const auto collected = std::chrono::steady_clock::now();
  auto table = fit_probes(collector, r, resolved_threads(s), cancel);
  if (!table) return std::nullopt;
  table->collect_s = std::chrono::duration<double>(collected - start).count();
  table->fit_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - collected).count();
  return table;
}

}  // namespace maskscope
