// Settings edits, restarts and undo history for the GUI.
#include "controller.hpp"

#include <algorithm>

#include <cmath>

namespace maskscope::gui {

std::int64_t auto_sample_count(const Settings& s) {
  auto cost = [](const Settings& t) { return double(t.n) * t.d * (1.0 + t.layers * (t.n + 4.0)); };
  Settings reference;  // n 10, d 64, L 4
  const double raw = std::clamp(1e5 * cost(reference) / cost(s), 500.0, 1e5);
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

void Controller::start(const Settings& s) {
  if (run_) {
    run_->cancel();
    retired_.push_back(std::move(run_));
  }
  RunOptions options = options_;
  options.start_paused = paused_;  // a restart while paused never runs, not even briefly
  run_ = std::make_unique<Run>(s, options);
  run_started_ = std::chrono::steady_clock::now();
  ++restarts_;
}

std::vector<SettingError> Controller::edit(const Settings& edited) {
  Settings s = edited;
  if (auto_samples_) s.samples = auto_sample_count(s);
  auto errors = validate(s);
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

std::shared_ptr<const Snapshot> Controller::snapshot() const { return run_->snapshot(); }

void Controller::poll() {
  retired_.erase(std::remove_if(retired_.begin(), retired_.end(), [](const std::unique_ptr<Run>& r) { return r->done(); }),
                 retired_.end());
}

}  // namespace maskscope::gui
