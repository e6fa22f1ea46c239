// maskscope-cli train: trains the random-weight network of docs/model.md section 7 with a tied language-model head
// on one of Zuo et al.'s tasks or a token file (docs/model.md, "Training"; docs/cli.md), writing config.json,
// step-NNNNNN.safetensors checkpoints in GPT-2's layout, its own state files and log.jsonl into a folder.
// Everything is checked before the folder is touched; Ctrl+C stops at a step boundary with a checkpoint.
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <type_traits>

#include "commands.hpp"
#include "core/model/input_file.hpp"
#include "core/model/settings_text.hpp"
#include "core/model/strict_number.hpp"
#include "core/run/kernel_info.hpp"
#include "core/run/resources.hpp"
#include "core/train/parameters.hpp"
#include "core/train/train_run.hpp"

namespace maskscope::cli {

namespace fs = std::filesystem;

CLI::App* add_train(CLI::App& app, TrainFlags& f) {
  auto* cmd = app.add_subcommand(
      "train", "train the random-weight network (section 7) with a tied LM head on a task or a token file");
  add_setting_flags(*cmd, f.run);
  auto text = [&](const char* flag, std::string& into, const char* help) {
    cmd->add_option(flag, into, help)->allow_extra_args(false);
  };
  text("--task", f.task, "addition | reversal | indexing | ordering: Zuo et al.'s task (or --tokens FILE, a corpus)");
  text("--steps", f.steps, "optimizer steps [1, 10^9] (default 1000)");
  text("--batch", f.batch, "sequences per step [1, 65536] (default 64)");
  text("--lr", f.lr, "peak learning rate (0, 10] (default 0.001)");
  text("--warmup", f.warmup, "linear warm-up steps [0, steps] (default 100, at most steps)");
  text("--weight-decay", f.weight_decay, "AdamW's decoupled decay on the 2-D tensors [0, 10] (default 0.1)");
  text("--grad-clip", f.grad_clip, "global gradient-norm clip [0, 10^6], 0 = none (default 1)");
  text("--eval-every", f.eval_every, "steps between evaluations into log.jsonl [1, 10^9] (default 100)");
  text("--checkpoint-every", f.checkpoint_every, "steps between checkpoints [1, 10^9] (default 1000; the last always)");
  text("--eval-sequences", f.eval_sequences, "test sequences per evaluation [1, 20000] (default 1000)");
  cmd->add_option("--out", f.run.out, "the run folder (new, or empty)");
  cmd->add_option("--resume", f.resume, "continue the run in this folder (its config.json); --threads may be given");
  cmd->add_flag("--quiet", f.run.quiet, "no progress line on stderr")->disable_flag_override();
  return cmd;
}

namespace {

std::atomic<bool> g_stop{false};
extern "C" void on_interrupt(int) { g_stop.store(true); }

// The flags of `train` itself into c, strictly (core/train/train_run.hpp's checks); every problem named.
void finish_training_flags(TrainFlags& f, const CLI::App& cmd, train::TrainRunConfig& c,
                           std::vector<SettingError>& errors) {
  const std::pair<const char*, std::string*> flags[] = {{"steps", &f.steps},
                                                        {"batch", &f.batch},
                                                        {"lr", &f.lr},
                                                        {"warmup", &f.warmup},
                                                        {"weight-decay", &f.weight_decay},
                                                        {"grad-clip", &f.grad_clip},
                                                        {"eval-every", &f.eval_every},
                                                        {"checkpoint-every", &f.checkpoint_every},
                                                        {"eval-sequences", &f.eval_sequences}};
  train::TrainTexts given;
  for (const auto& [flag, text] : flags)
    if (cmd.count(std::string("--") + flag) > 0) given.emplace_back(flag, *text);
  train::apply_training_texts(given, c, errors);
}

// The model settings from the setting flags (the table's rows), without validating yet: n and vocab come from
// the data first. Errors name the flag.
void model_flags(TrainFlags& f, const CLI::App& cmd, std::vector<SettingError>& errors) {
  train::TrainTexts given;
  for (const SettingFlag& sf : setting_flags())
    if (cmd.count(std::string("--") + sf.flag) > 0) given.emplace_back(sf.key, f.run.text[sf.flag]);
  std::vector<SettingError> problems;
  f.run.s = train::training_model_settings(given, problems);
  for (SettingError& e : problems) {
    if (const SettingFlag* row = setting_flag(e.setting)) e.setting = row->flag;
    errors.push_back(std::move(e));
  }
}

}  // namespace

int cmd_train(TrainFlags& f, const CLI::App& cmd, const MpiSession& mpi) {
  train::TrainRunConfig c;
  std::vector<SettingError> errors;
  const bool resume = cmd.count("--resume") > 0;
  if (resume) {
    for (const CLI::Option* o : cmd.get_options())
      if (o->count() > 0 && o->get_name() != "--resume" && o->get_name() != "--threads" && o->get_name() != "--quiet" &&
          o->get_name() != "--help")
        errors.push_back({o->get_name().substr(2), "cannot be given with --resume (the run continues as " + f.resume +
                                                       "/config.json describes it; --threads may be given)"});
    std::string text, why;
    nlohmann::json j;
    if (errors.empty() &&
        read_input_file(f.resume + "/config.json", kMaxTextInputBytes, "the run's config", text, why)) {
      j = nlohmann::json::parse(text, nullptr, false);
      if (j.is_discarded() || !j.contains("training")) why = "'" + f.resume + "/config.json' is not a training run's";
      else try {
          c = train::training_from_json(j.at("training"));
        } catch (const std::exception& e) { why = e.what(); }
    }
    if (!why.empty()) errors.push_back({"resume", why});
    c.out = f.resume;
    c.threads = resolved_threads(f.run.s);
    if (cmd.count("--threads")) {
      convert_flag(errors, "threads", [&] { setting_from_text("threads", f.run.text["threads"], f.run.s); });
      c.threads = resolved_threads(f.run.s);
    }
  } else {
    model_flags(f, cmd, errors);
    finish_training_flags(f, cmd, c, errors);
    c.task = f.task;
    c.tokens = f.run.s.tokens;
    c.tokens_format = f.run.s.tokens_format;
    c.seed = f.run.s.seed;
    c.threads = resolved_threads(f.run.s);
    if (cmd.count("--task") && cmd.count("--tokens"))
      errors.push_back({"task", "give a task or --tokens FILE, not both"});
    else if (!cmd.count("--task") && !cmd.count("--tokens"))
      errors.push_back({"task", "missing: --task addition|reversal|indexing|ordering or --tokens FILE"});
    else if (cmd.count("--task")) try {
        (void)task_from_name(f.task);
      } catch (const std::exception& e) { errors.push_back({"task", e.what()}); }
    if (!cmd.count("--out")) errors.push_back({"out", "missing: the run folder (new or empty)"});
    else if (std::string why = train::check_new_run_folder(f.run.out); !why.empty()) errors.push_back({"out", why});
    c.out = f.run.out;
    c.model = f.run.s;
    c.model.tokens.clear();
    c.model.tokens_format = TokensFormat::ids;
  }
  if (!errors.empty()) return report_invalid(errors);
  // The data, then the model it fixes (n, vocab), validated as run validates a setting.
  TrainingData data;
  try {
    data = train::run_data(c);
  } catch (const std::exception& e) { return report_invalid({{c.task.empty() ? "tokens" : "task", e.what()}}); }
  const Settings model = train::run_model(c, data);
  train::check_run_model(model, data, !resume && cmd.count("--n") ? f.run.s.n : -1,
                         !resume && cmd.count("--vocab") ? f.run.s.vocab : -1, errors);
  if (!errors.empty()) return report_invalid(errors);
  // Memory: the trainer (parameters, moments, a gradient per chunk, activations per worker) and the data.
  const std::uint64_t need = train::Trainer::memory_bytes(model, c.batch, c.threads) +
                             sizeof(std::int32_t) * (data.train.size() + data.test.size());
  if (std::string shortfall = memory_shortfall(need); !shortfall.empty())
    errors.push_back({"batch", "this run needs " + shortfall + "; lower --batch, --threads, --d or --layers"});
  // Under mpirun: every rank has checked everything before rank 0 writes anything (a collective as a barrier).
  if (mpi.active() && mpi_sum(mpi, {errors.empty() ? 0 : 1})[0] > 0 && errors.empty())
    errors.push_back({"out", "another rank refused the run (its message names the flag)"});
  if (!errors.empty()) return report_invalid(errors);
  if (mpi.active()) {
    mpi_require_one_kernel(mpi, training_kernel_name());  // ranks whose products round alike, or none runs
    // Rank r computes chunks [r C / P, (r + 1) C / P) of each batch; every chunk's gradient and loss then goes from
    // its rank to all, and every rank sums the chunks in the same tree and updates the same parameters.
    const int chunks = train::chunk_count(c.batch), P = mpi.size();
    auto first_of = [=](int r) { return int(std::int64_t(r) * chunks / P); };
    c.first_chunk = first_of(mpi.rank());
    c.last_chunk = first_of(mpi.rank() + 1);
    c.exchange = [&mpi, chunks, P, first_of](std::vector<Network>& grads, std::vector<train::LossSum>& losses) {
      for (int k = 0; k < chunks; ++k) {
        int owner = 0;
        while (owner + 1 < P && first_of(owner + 1) <= k) ++owner;
        train::for_each_tensor(grads[std::size_t(k)], [&](const std::string&, std::vector<float>& v, bool) {
          if (!v.empty()) mpi_broadcast(mpi, v.data(), v.size(), owner);
        });
        double loss[2] = {losses[std::size_t(k)].sum, double(losses[std::size_t(k)].count)};
        mpi_broadcast(mpi, loss, 2, owner);
        losses[std::size_t(k)] = {loss[0], std::int64_t(loss[1])};
      }
    };
    c.agree_stop = [&mpi](bool asked) { return mpi_sum(mpi, {asked ? 1 : 0})[0] > 0; };
    c.writer = mpi.rank() == 0;
  }
  const bool terminal = !f.run.quiet && isatty(STDERR_FILENO) && mpi.rank() == 0;
  std::signal(SIGINT, on_interrupt);
  const auto started = std::chrono::steady_clock::now();
  std::int64_t first_step = -1;
  const std::int64_t reached = train::run_training(c, resume, &g_stop, [&](const train::TrainProgress& p) {
    if (!terminal) return;
    if (first_step < 0) first_step = p.step - 1;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    const double eta = p.step > first_step ? elapsed / double(p.step - first_step) * double(p.steps - p.step) : -1;
    std::fprintf(stderr, "\rstep %lld / %lld  loss %.4f  accuracy %s  %.0f tokens/s  ETA %s   ",
                 static_cast<long long>(p.step), static_cast<long long>(p.steps), p.loss,
                 p.accuracy < 0 ? "--" : std::to_string(p.accuracy).substr(0, 5).c_str(), p.tokens_per_s,
                 format_eta(eta).c_str());
  });
  std::signal(SIGINT, SIG_DFL);
  if (terminal) std::fprintf(stderr, "\n");
  if (reached < c.steps) {
    if (!f.run.quiet && mpi.rank() == 0)
      std::fprintf(stderr, "stopped at step %lld; continue with: maskscope-cli train --resume %s\n",
                   static_cast<long long>(reached), c.out.c_str());
    return 130;
  }
  if (!f.run.quiet && mpi.rank() == 0)
    std::fprintf(stderr, "done: %lld steps into %s\n", static_cast<long long>(reached), c.out.c_str());
  return 0;
}

}  // namespace maskscope::cli
