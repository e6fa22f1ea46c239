// The Training tab: the form, the run's buttons, its curves and the step scrubber (training_tab.hpp).
#include "window/train/training_tab.hpp"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/model/checkpoint_config.hpp"
#include "common/format.hpp"
#include "window/live/live.hpp"
#include "window/plot.hpp"
#include "common/train/run_preset.hpp"

namespace maskscope::gui {

namespace {

constexpr const char* kTasks[] = {"addition", "reversal", "indexing", "ordering"};
constexpr const char* kMetrics[] = {"adjacency", "norm adjacency", "RP", "weight on key 0", "r_l (with BOS)"};
const ImU32 kLayerColors[] = {IM_COL32(31, 119, 180, 255),  IM_COL32(255, 127, 14, 255),  IM_COL32(44, 160, 44, 255),
                              IM_COL32(214, 39, 40, 255),   IM_COL32(148, 103, 189, 255), IM_COL32(140, 86, 75, 255),
                              IM_COL32(227, 119, 194, 255), IM_COL32(127, 127, 127, 255)};

std::string seconds_text(double s) {
  char b[48];
  if (s < 0) return "--";
  if (s < 90) std::snprintf(b, sizeof b, "%.0f s", s);
  else if (s < 5400) std::snprintf(b, sizeof b, "%.1f min", s / 60);
  else std::snprintf(b, sizeof b, "%.1f h", s / 3600);
  return b;
}

// The form's defaults: the presets' small network (run_preset.hpp), on one thread beside the live run.
train::TrainRunConfig default_form() {
  train::TrainRunConfig c = default_training_config();
  c.threads = 1;
  return c;
}

template <class T>
bool input_whole(const char* label, T& value, std::int64_t lo, std::int64_t hi) {
  int v = int(value);
  if (!ImGui::InputInt(label, &v, 0, 0)) return false;
  value = T(std::clamp<std::int64_t>(v, lo, hi));
  return true;
}

}  // namespace

TrainingTab::TrainingTab() : form_(default_form()) {}

std::string TrainingTab::status_text(const Settings* shown) {
  const auto st = session_.state();
  if (st != TrainingSession::State::running && st != TrainingSession::State::stopping) {
    // Which checkpoint every tab shows (and each frame of the exported animation).
    const auto& steps = session_.checkpoints();
    if (!shown || !session_.has_run() || steps.empty() || shown->checkpoint != session_.folder() || shown->step < 0)
      return "";
    return "checkpoint step " + with_thousands(shown->step) + " / " + with_thousands(steps.back());
  }
  const train::TrainProgress p = session_.progress();
  char b[200];
  std::snprintf(b, sizeof b, "training: step %lld / %lld   loss %.3f   %s tokens/s   ETA %s%s", (long long)p.step,
                (long long)p.steps, p.loss, with_thousands(std::int64_t(p.tokens_per_s)).c_str(),
                seconds_text(session_.eta_seconds()).c_str(),
                st == TrainingSession::State::stopping ? " (pausing)" : "");
  return b;
}

bool TrainingTab::start(std::string& error) {
  train::TrainRunConfig c = form_;
  c.task = use_tokens_ ? "" : kTasks[task_];
  c.tokens = use_tokens_ ? tokens_path_ : "";
  c.out = folder_;
  c.opt.warmup = std::min<std::int64_t>(c.opt.warmup, c.steps);
  c.opt.decay_steps = c.steps;
  scrub_ = 0;
  shown_step_ = -2;
  follow_ = true;
  return session_.start(c, error);
}

void TrainingTab::prepare(const train::TrainRunConfig& c) {
  form_ = c;
  use_tokens_ = !c.tokens.empty();
  tokens_path_ = c.tokens;
  for (int t = 0; t < 4; ++t)
    if (c.task == kTasks[t]) task_ = t;
  std::snprintf(folder_, sizeof folder_, "%s", c.out.c_str());
}

bool TrainingTab::start_into(const std::string& folder, std::string& error) {
  std::snprintf(folder_, sizeof folder_, "%s", folder.c_str());
  return start(error);
}

bool TrainingTab::settling() {
  const auto st = session_.state();
  if (st == TrainingSession::State::running || st == TrainingSession::State::stopping) return true;
  if (!session_.has_run()) return false;
  session_.refresh();
  const auto& steps = session_.checkpoints();
  return playing_ || (follow_ && !steps.empty() && shown_step_ != steps.back());
}

bool TrainingTab::open_run(Controller& controller, const std::string& folder, std::string& error) {
  if (!session_.open(folder, error)) return false;
  std::snprintf(open_folder_, sizeof open_folder_, "%s", folder.c_str());
  prepare(session_.config());  // the form shows what the run is
  const auto& steps = session_.checkpoints();
  if (steps.empty()) return true;
  scrub_ = int(steps.size()) - 1;
  follow_ = false;
  return show_step(controller, steps.back(), error);
}

bool TrainingTab::show_step(Controller& controller, std::int64_t step, std::string& error) {
  Settings s = controller.settings();
  auto errors = as_checkpoint(s, session_.folder(), step);
  // The run's evaluation prompts are 256: the automatic sample count (seconds of the cores) would repeat them.
  if (errors.empty()) controller.set_auto_samples(false);
  if (errors.empty()) errors = controller.edit(s);
  if (!errors.empty()) {
    error = errors[0].setting + ": " + errors[0].message;
    return false;
  }
  shown_step_ = step;
  return true;
}

void TrainingTab::tick(Controller& controller) {
  session_.refresh();
  const auto& steps = session_.checkpoints();
  if (steps.empty()) return;
  scrub_ = std::clamp(scrub_, 0, int(steps.size()) - 1);
  const auto now = std::chrono::steady_clock::now();
  if (playing_ && now - last_play_ > std::chrono::milliseconds(kPlayIntervalMs)) {
    last_play_ = now;
    if (scrub_ + 1 < int(steps.size())) ++scrub_;
    else playing_ = false;
  } else if (follow_ && !playing_) {
    scrub_ = int(steps.size()) - 1;
  }
  const std::int64_t want = steps[std::size_t(scrub_)];
  if (want != shown_step_) {
    std::string error;
    if (!show_step(controller, want, error)) {
      message_ = error;
      message_error_ = true;
      shown_step_ = want;  // not again every frame
    }
  }
}

void TrainingTab::draw_form() {
  const bool busy =
      session_.state() == TrainingSession::State::running || session_.state() == TrainingSession::State::stopping;
  ImGui::BeginDisabled(busy);
  ImGui::TextUnformatted("New run");
  ImGui::Checkbox("token file", &use_tokens_);
  explain(
      "Train a language model on a token file (loss on every next token, a held-out 10% tail as the test set) "
      "instead of one of Zuo et al.'s four tasks.");
  if (use_tokens_) {
    char buf[512];
    std::snprintf(buf, sizeof buf, "%s", tokens_path_.c_str());
    if (ImGui::InputText("tokens", buf, sizeof buf)) tokens_path_ = buf;
  } else {
    ImGui::Combo("task", &task_, kTasks, 4);
    explain(
        "Zuo et al.'s tasks (Sec. 4.2): 20,000 training and 20,000 test sequences, loss on the answer tokens, "
        "test accuracy = exact match of the greedy answer.");
  }
  Settings& s = form_.model;
  ImGui::PushItemWidth(90);
  input_whole("d", s.d, 4, 1024);
  ImGui::SameLine();
  input_whole("layers", s.layers, 1, 16);
  ImGui::SameLine();
  input_whole("heads", s.heads, 1, 64);
  ImGui::Checkbox("MLP", &s.mlp);
  ImGui::SameLine();
  bool bos = s.first_token == FirstToken::fixed;
  if (ImGui::Checkbox("BOS token", &bos)) s.first_token = bos ? FirstToken::fixed : FirstToken::none;
  explain("first_token fixed: every sequence starts with the same BOS token (where a learned sink forms).");
  ImGui::SameLine();
  bool learned = s.pos_embedding == PosEmbedding::learned;
  if (ImGui::Checkbox("learned positions", &learned))
    s.pos_embedding = learned ? PosEmbedding::learned : PosEmbedding::none;
  double rope = s.rope_base;
  if (ImGui::InputDouble("RoPE base (0 off)", &rope, 0, 0, "%.0f")) s.rope_base = std::max(0.0, rope);
  input_whole("weight seed", s.weight_seed, 1, 1'000'000'000);
  ImGui::SameLine();
  input_whole("data seed", form_.seed, 1, 1'000'000'000);
  input_whole("steps", form_.steps, 1, 1'000'000'000);
  ImGui::SameLine();
  input_whole("batch", form_.batch, 1, 65536);
  ImGui::InputDouble("lr", &form_.opt.lr, 0, 0, "%.1e");
  form_.opt.lr = std::clamp(form_.opt.lr, 1e-7, 10.0);
  ImGui::SameLine();
  input_whole("warm-up", form_.opt.warmup, 0, 1'000'000'000);
  ImGui::InputDouble("weight decay", &form_.opt.weight_decay, 0, 0, "%.3g");
  form_.opt.weight_decay = std::clamp(form_.opt.weight_decay, 0.0, 10.0);
  ImGui::SameLine();
  ImGui::InputDouble("grad clip", &form_.opt.grad_clip, 0, 0, "%.3g");
  form_.opt.grad_clip = std::clamp(form_.opt.grad_clip, 0.0, 1e6);
  input_whole("eval every", form_.eval_every, 1, 1'000'000'000);
  ImGui::SameLine();
  input_whole("checkpoint every", form_.checkpoint_every, 1, 1'000'000'000);
  input_whole("threads", form_.threads, 1, 64);
  ImGui::PopItemWidth();
  ImGui::SetNextItemWidth(260);
  ImGui::InputText("run folder", folder_, sizeof folder_);
  if (ImGui::Button("Start")) {
    std::string error;
    message_error_ = !start(error);
    message_ = message_error_ ? error : std::string("training into ") + folder_;
  }
  ImGui::Separator();
  ImGui::SetNextItemWidth(260);
  ImGui::InputText("##open", open_folder_, sizeof open_folder_);
  ImGui::SameLine();
  const bool open_clicked = ImGui::Button("Open run");
  ImGui::EndDisabled();
  if (open_clicked) open_requested_ = true;
}

void TrainingTab::draw_plots(float height) {
  const auto& ev = session_.evaluations();
  const bool log_x = form_.steps >= 1000 || (!ev.empty() && ev.back().step >= 1000);
  auto x_of = [&](std::int64_t step) { return log_x ? std::log10(double(step) + 1) : double(step); };
  const std::string x_label = log_x ? "log10(step + 1)" : "step";
  PlotSeries train, test, acc;
  train.label = "train loss";
  test.label = "test loss";
  acc.label = "test accuracy";
  train.color = IM_COL32(31, 119, 180, 255);
  test.color = IM_COL32(255, 127, 14, 255);
  acc.color = IM_COL32(44, 160, 44, 255);
  for (const TrainEvaluation& e : ev) {
    if (e.train_loss >= 0) {
      train.x.push_back(x_of(e.step));
      train.y.push_back(e.train_loss);
    }
    test.x.push_back(x_of(e.step));
    test.y.push_back(e.test_loss);
    acc.x.push_back(x_of(e.step));
    acc.y.push_back(e.test_accuracy);
  }
  const float w = ImGui::GetContentRegionAvail().x;
  plot("##loss", ImVec2(w * 0.5f - 4, height), {"Loss", x_label, "cross-entropy"}, {train, test});
  ImGui::SameLine();
  PlotSpec acc_spec{"Test accuracy (exact match)", x_label, "accuracy"};
  acc_spec.y_include_lo = 0.0;  // a fraction: on its own scale even while it is flat at 0
  acc_spec.y_include_hi = 1.0;
  plot("##acc", ImVec2(-1, height), acc_spec, {acc});
  ImGui::SetNextItemWidth(200);
  ImGui::Combo("per-layer reading", &metric_, kMetrics, 5);
  explain(
      "Per layer on the evaluation prompts, with +-1 SE bars: the adjacency of the output cosines, the norm "
      "adjacency, the recency probability RP of the weights, the mean attention weight on key 0 (the sink), and "
      "r_l = dR^2 bidirectional / dR^2 causal, the residual-stream share of the leakage (logged with a fixed first "
      "token; no point where the causal dR^2 is within 3 SE of 0).");
  std::size_t layers = 0;
  for (const auto& e : ev) layers = std::max(layers, e.layers.size());
  std::vector<PlotSeries> per_layer;
  for (std::size_t l = 0; l < layers; ++l) {
    PlotSeries sr;
    sr.label = "layer " + std::to_string(l + 1);
    sr.color = kLayerColors[l % 8];
    for (const auto& e : ev) {
      if (l >= e.layers.size()) continue;
      const TrainLayerReading& r = e.layers[l];
      const double v[] = {r.adjacency, r.norm_adjacency, r.rp, r.sink_weight, r.residual_share};
      const double se[] = {r.adjacency_se, r.norm_adjacency_se, r.rp_se, r.sink_weight_se, r.residual_share_se};
      if (!std::isfinite(v[metric_])) continue;  // r_l: absent without BOS, null where not significant
      sr.x.push_back(x_of(e.step));
      sr.y.push_back(v[metric_]);
      sr.err.push_back(se[metric_]);
    }
    per_layer.push_back(std::move(sr));
  }
  plot("##layers", ImVec2(-1, std::max(120.0f, ImGui::GetContentRegionAvail().y)),
       {std::string(kMetrics[metric_]) + " per layer against step", x_label, kMetrics[metric_]}, per_layer);
}

void TrainingTab::draw(Controller& controller) {
  ImGui::BeginChild("##train_form", ImVec2(430, 0), true);
  draw_form();
  if (open_requested_) {
    open_requested_ = false;
    std::string error;
    message_error_ = !open_run(controller, open_folder_, error);
    message_ = message_error_ ? error : std::string("opened ") + open_folder_;
  }
  ImGui::Separator();
  const auto st = session_.state();
  const bool running = st == TrainingSession::State::running;
  ImGui::BeginDisabled(!running);
  if (ImGui::Button("Pause")) session_.pause();
  ImGui::EndDisabled();
  explain("Stops at the next step boundary with a checkpoint; Resume continues to the bytes of a run never stopped.");
  ImGui::SameLine();
  ImGui::BeginDisabled(st != TrainingSession::State::paused);
  if (ImGui::Button("Resume")) {
    std::string error;
    if (!session_.resume(error)) message_ = error, message_error_ = true;
  }
  ImGui::EndDisabled();
  static constexpr const char* kStates[] = {"no run", "training", "pausing", "paused", "finished", "failed"};
  ImGui::SameLine();
  ImGui::Text("%s", kStates[int(st)]);
  if (session_.has_run()) ImGui::TextWrapped("run: %s", session_.folder().c_str());
  if (st == TrainingSession::State::failed) message_ = session_.error(), message_error_ = true;
  if (!message_.empty())
    ImGui::TextColored(message_error_ ? ImVec4(0.9f, 0.3f, 0.25f, 1) : ImVec4(0.5f, 0.8f, 0.5f, 1), "%s",
                       message_.c_str());
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginChild("##train_plots", ImVec2(0, 0), false);
  // The scrubber: the selected checkpoint is the live model of every tab.
  const auto& steps = session_.checkpoints();
  if (!steps.empty()) {
    if (ImGui::Button(playing_ ? "Stop" : "Play")) {
      playing_ = !playing_;
      if (playing_ && scrub_ + 1 >= int(steps.size())) scrub_ = 0;
      last_play_ = std::chrono::steady_clock::now();
      follow_ = false;
    }
    explain("Steps through the checkpoints (0.8 s each): every tab shows the network of the step shown.");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x - 200);
    char label[64];
    std::snprintf(label, sizeof label, "step %lld",
                  (long long)steps[std::size_t(std::clamp(scrub_, 0, int(steps.size()) - 1))]);
    if (ImGui::SliderInt("##scrub", &scrub_, 0, int(steps.size()) - 1, label)) {
      follow_ = scrub_ == int(steps.size()) - 1;
      playing_ = false;
    }
    explain(
        "The checkpoint that is the live model: Attention, h(j) and norms, Metrics, Leakage, Probes, Histograms "
        "and Sweep show this network (Settings checkpoint and step).");
    ImGui::SameLine();
    ImGui::Checkbox("follow newest", &follow_);
  } else {
    ImGui::TextDisabled("No checkpoint yet: start a run or open a run folder.");
  }
  draw_plots(std::max(140.0f, ImGui::GetContentRegionAvail().y * 0.45f));
  ImGui::EndChild();
}

}  // namespace maskscope::gui
