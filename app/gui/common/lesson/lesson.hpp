// Lessons: a guided walk through the mechanism for teaching (assets/lessons/*.json). A lesson is a
// base settings object and an ordered list of steps; each step changes a few settings on top of the
// previous one, says what to look at (tab, view, an outline on a layer panel or a cell range, an
// optional theory overlay) and explains it in 2-6 sentences, quoting live numbers such as {rp[2]}.
// Window-free, so it is tested without a display.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "core/model/settings.hpp"
#include "core/stats/snapshot.hpp"
#include "common/view_options.hpp"

namespace maskscope::gui {

// What a step points at: a layer panel (layer >= 0), optionally a cell range in it (rows x cols,
// 0-based, inclusive), drawn as an outline with a label.
struct LessonPointer {
  int layer = -1;
  int row0 = -1, row1 = -1, col0 = -1, col1 = -1;  // -1: the whole panel
  std::string label;
  bool operator==(const LessonPointer&) const = default;
};

// Closed forms a step can overlay: the layer-1 weights of Behind RoPE Sec. 3.2 on the diagonal,
// e / (e + (i-1) e^alpha), beside the simulation.
enum class LessonTheory { none, layer1_weights };

struct LessonStep {
  std::string title;
  std::string text;                                // 2-6 sentences; {KEY[L]} (a metric's key: {rp[2]}), {samples}
  std::vector<std::string> equations;              // readable Unicode text
  nlohmann::json set = nlohmann::json::object();   // partial settings on top of the previous step
  nlohmann::json view = nlohmann::json::object();  // partial view options (tab, show, ...)
  std::optional<LessonPointer> point;
  LessonTheory theory = LessonTheory::none;
  // With the lesson's run folder (issue 50): "init" shows its step 0, "trained" its last step; "" the drawn network.
  std::string state = {};
  bool operator==(const LessonStep&) const = default;
};

struct Lesson {
  std::string name;  // file stem
  std::string title;
  std::string description;
  Settings settings;  // before step 1
  ViewOptions view;
  std::vector<LessonStep> steps;
  // A training run folder the steps with a state read (--run DIR overrides it), and how to train it when missing.
  std::string run_folder;
  nlohmann::json run_train = nlohmann::json::object();
  bool operator==(const Lesson&) const = default;
};

// Throws std::runtime_error naming `where` (the file), the step and the key: "lesson.json:
// steps[3].set.alpha: ...". Every step's settings are validated.
Lesson lesson_from_json(const nlohmann::json& j, const std::string& where);
bool load_lesson_file(const std::string& path, Lesson& out, std::string& error);

// The settings and view of step k (0-based): the base with steps 0..k applied in order, so going
// back recomputes them exactly.
Settings lesson_settings(const Lesson& l, std::size_t k);
ViewOptions lesson_view(const Lesson& l, std::size_t k);

// Where a lesson stands: the step on screen, moved by next / previous (presenter remotes send
// arrows and Page Up / Down). Each step's settings are recomputed from the lesson, so going back
// restores them exactly.
class LessonPlayer {
 public:
  explicit LessonPlayer(Lesson lesson) : lesson_(std::move(lesson)) {}
  const Lesson& lesson() const { return lesson_; }
  std::size_t step() const { return step_; }
  const LessonStep& current() const { return lesson_.steps[step_]; }
  bool next();      // false on the last step
  bool previous();  // false on the first step
  void go(std::size_t k);
  Settings settings() const { return lesson_settings(lesson_, step_); }
  ViewOptions view() const { return lesson_view(lesson_, step_); }

 private:
  Lesson lesson_;
  std::size_t step_ = 0;
};

// The step's text with {rp[2]} etc. replaced by the live values (mean ± SE) from `snap`; "…" while
// the run has no samples; an unknown placeholder is left as it is.
std::string lesson_text(const std::string& text, const Snapshot* snap);

// Shipped lessons (assets/lessons, embedded at build time), in menu order.
const std::vector<Lesson>& shipped_lessons();
const Lesson* find_shipped_lesson(const std::string& name);

}  // namespace maskscope::gui
