// Settings edits, restarts and undo history for the GUI.
#include "common/controller.hpp"

#include <algorithm>

#include <cmath>

#include "core/run/resources.hpp"

namespace maskscope::gui {

std::int64_t auto_sample_count(const Settings& s) {
  const Settings reference;  // n 10, d 64, L 4
  const double raw = std::clamp(1e5 * sample_cost(reference) / sample_cost(s), 500.0, 1e5);
  const double unit = std::pow(10.0, std::floor(std::log10(raw)) - 1);  // two significant digits
  return std::int64_t(std::round(raw / unit) * unit);
}

void Controller::set_auto_samples(bool on) {
  auto_samples_ = on;
  if (on) edit(current_);
}

Controller::Controller(const Settings& initial, RunOptions options)
    : options_(std::move(options)), current_(initial), history_{initial} {
  start(current_);
}

Controller::~Controller() {
  if (run_) run_->cancel();
  for (auto& r : retired_) r->cancel();
}

namespace {
// Peak memory of a run of `s` with the threads it will use (resources.hpp).
std::uint64_t run_bytes(const Settings& s) { return estimate_cost(s, resolved_threads(s)).memory_bytes; }
}  // namespace

std::string memory_refusal(const Settings& s, std::uint64_t budget) {
  const std::uint64_t need = run_bytes(s);
  if (need <= budget) return "";
  return "n = " + std::to_string(s.n) + " with " + std::to_string(s.layers) + " layers needs about " +
         bytes_text(need) + " per run; the window allows " + bytes_text(budget) +
         ". Lower n or layers (or threads), or use maskscope-cli.";
}

bool Controller::fits_beside_retired(const Settings& s) const {
  std::uint64_t total = run_bytes(s);
  for (const auto& r : retired_) total += run_bytes(r->settings());
  return total <= memory_budget_;
}

void Controller::start(const Settings& s) {
  tensors_.reset();  // any settings change leaves the tensors for the simulation
  if (run_) {
    run_->abandon();  // nobody reads it again: no final snapshot, memory freed when its workers stop
    retired_.push_back(std::move(run_));
  }
  run_started_ = std::chrono::steady_clock::now();
  ++restarts_;
  if (!retired_.empty() && !fits_beside_retired(s)) {
    // Large settings: the cancelled runs stop within one layer of one sample; poll() starts this
    // one when they are gone, so the window never holds two large runs at once.
    auto empty = std::make_shared<Snapshot>();
    empty->settings = s;
    waiting_ = std::move(empty);
    return;
  }
  launch();
}

void Controller::launch() {
  RunOptions options = options_;
  options.start_paused = paused_;  // a restart while paused never runs, not even briefly
  run_ = std::make_unique<Run>(current_, options);
  run_->set_reader_cost(picture_cost_);
  waiting_.reset();
}

void Controller::report_picture_cost(std::chrono::nanoseconds cost) {
  picture_cost_ = cost;
  if (run_) run_->set_reader_cost(cost);
}

std::vector<SettingError> Controller::edit(const Settings& edited) {
  Settings s = edited;
  if (auto_samples_) s.samples = auto_sample_count(s);
  auto errors = validate(s);
  if (errors.empty())
    if (std::string refusal = memory_refusal(s, memory_budget_); !refusal.empty()) errors.push_back({"n", refusal});
  if (!errors.empty()) return errors;
  if (s == current_) return {};
  current_ = s;
  start(current_);
  return {};
}

void Controller::commit_undo_point() {
  if (history_[cursor_] == current_) return;
  history_.resize(cursor_ + 1);
  history_.push_back(current_);
  cursor_ = history_.size() - 1;
}

bool Controller::can_undo() const { return cursor_ > 0 || history_[cursor_] != current_; }
bool Controller::can_redo() const { return cursor_ + 1 < history_.size(); }

bool Controller::undo() {
  commit_undo_point();
  if (cursor_ == 0) return false;
  --cursor_;
  current_ = history_[cursor_];
  start(current_);
  return true;
}

bool Controller::redo() {
  if (!can_redo()) return false;
  ++cursor_;
  current_ = history_[cursor_];
  start(current_);
  return true;
}

void Controller::reset_to_defaults(const Settings& defaults) {
  edit(defaults);
  commit_undo_point();
}

void Controller::set_paused(bool paused, std::string reason) {
  paused_ = paused;
  pause_reason_ = paused ? std::move(reason) : std::string();
  if (run_) run_->set_paused(paused);
}

std::shared_ptr<const Snapshot> Controller::snapshot() const {
  if (tensors_) return tensors_;
  return run_ ? run_->snapshot() : waiting_;
}

void Controller::show_tensors(std::shared_ptr<const Snapshot> snap, std::string label) {
  if (!tensors_) before_tensors_ = current_;
  if (run_) {
    run_->abandon();
    retired_.push_back(std::move(run_));
  }
  waiting_.reset();
  tensors_ = std::move(snap);
  tensors_label_ = std::move(label);
  current_ = tensors_->settings;
}

void Controller::close_tensors() {
  if (!tensors_) return;
  current_ = before_tensors_;
  start(current_);
}

void Controller::poll() {
  retired_.erase(
      std::remove_if(retired_.begin(), retired_.end(), [](const std::unique_ptr<Run>& r) { return r->done(); }),
      retired_.end());
  if (!run_ && !tensors_ && (retired_.empty() || fits_beside_retired(current_))) launch();
}

}  // namespace maskscope::gui
