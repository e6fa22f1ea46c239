// Lessons: every shipped lesson loads and every step validates, steps are cumulative and going
// back restores the previous settings exactly, live values fill the text, bad files name the key.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include <sys/stat.h>

#include "core/run/runner.hpp"
#include "common/lesson/lesson.hpp"

using namespace maskscope;
using namespace maskscope::gui;
namespace fs = std::filesystem;

TEST_CASE("every shipped lesson loads from disk and from the binary, and every step's settings are valid") {
  int on_disk = 0;
  for (const auto& entry : fs::directory_iterator(MASKSCOPE_LESSON_DIR)) {
    ++on_disk;
    Lesson l;
    std::string error;
    REQUIRE_MESSAGE(load_lesson_file(entry.path().string(), l, error), error);
    const Lesson* embedded = find_shipped_lesson(l.name);
    REQUIRE(embedded != nullptr);
    CHECK(*embedded == l);
    CHECK(l.steps.size() >= 3);
    for (std::size_t k = 0; k < l.steps.size(); ++k) {
      INFO(l.name, " step ", k);
      CHECK(validate(lesson_settings(l, k)).empty());
      CHECK_FALSE(l.steps[k].title.empty());
      CHECK(l.steps[k].text.size() > 40);
      if (l.steps[k].point) CHECK(l.steps[k].point->layer <= lesson_settings(l, k).layers);
    }
  }
  CHECK(on_disk == 5);
  CHECK(shipped_lessons().size() == 5);  // none skipped as broken
  for (const char* name : {"where-position-comes-from", "layernorm-recency", "random-networks", "absolute-leakage"})
    CHECK_MESSAGE(find_shipped_lesson(name) != nullptr, name);
}

TEST_CASE("each step changes a few settings on top of the previous one; going back restores them exactly") {
  const Lesson& l = *find_shipped_lesson("where-position-comes-from");
  CHECK(lesson_settings(l, 0).mask == MaskKind::bidirectional);
  CHECK(lesson_settings(l, 1).mask == MaskKind::causal);
  CHECK(lesson_settings(l, 1).d == lesson_settings(l, 0).d);  // kept from the step before
  CHECK(lesson_view(l, 1).quantity == Quantity::weight);
  CHECK(lesson_view(l, 1).tab == Tab::attention);  // kept from step 0
  CHECK(l.steps[1].theory == LessonTheory::layer1_weights);
  LessonPlayer player(l);
  std::vector<Settings> seen = {player.settings()};
  while (player.next()) seen.push_back(player.settings());
  CHECK(seen.size() == l.steps.size());
  CHECK_FALSE(player.next());  // stays on the last step
  for (std::size_t k = seen.size() - 1; k > 0; --k) {
    REQUIRE(player.previous());
    CHECK(player.step() == k - 1);
    CHECK(player.settings() == seen[k - 1]);
  }
  CHECK_FALSE(player.previous());
}

TEST_CASE("live values in the text: {rp[2]} and friends from the snapshot, an ellipsis before samples") {
  Settings s;
  s.n = 6;
  s.d = 16;
  s.layers = 2;
  s.samples = 2000;
  s.threads = 2;
  const auto snap = run_to_completion(s);
  const std::string text =
      lesson_text("RP {rp[2]}, adj {adjacency[1]}, dR2 {delta_r2[2]}, n {samples}, odd {rp[9]}", snap.get());
  CHECK(text.find("RP 0.") == 0);
  CHECK(text.find("\u00b1") != std::string::npos);
  CHECK(text.find("n 2,000") != std::string::npos);
  CHECK(text.find("odd {rp[9]}") != std::string::npos);  // no layer 9: left as written
  CHECK(lesson_text("RP {rp[2]}", nullptr) == "RP \u2026");
}

TEST_CASE("a bad lesson file is refused naming the file, the step and the key") {
  const fs::path dir = fs::path(MASKSCOPE_TEST_WORK) / "lessons";
  fs::create_directories(dir);
  struct Case {
    const char* json;
    const char* expect;
  } cases[] = {
      {R"({"title": "t", "steps": [{"title": "a", "text": "x", "set": {"alpha": 3}}]})", "bad.json: steps[0].set"},
      {R"({"title": "t", "steps": [{"title": "a", "text": "x"}, {"title": "b", "text": "y", "colour": 1}]})",
       "bad.json: steps[1]: unknown key 'colour'"},
      {R"({"title": "t", "steps": [{"title": "a", "text": "x", "view": {"tab": "nope"}}]})", "steps[0]: view.tab"},
      {R"({"title": "t", "steps": [{"title": "a", "text": "x", "point": {"layer": 9}}]})", "steps[0].point.layer"},
      {R"({"title": "t", "steps": [{"title": "a", "text": "x", "theory": "magic"}]})", "steps[0].theory"},
      {R"({"title": "t", "steps": []})", "'steps' must be a non-empty list"},
      {R"({"title": "t", "steps": [{"title": "a", "te)", "not valid JSON"},
  };
  for (const Case& c : cases) {
    const fs::path file = dir / "bad.json";
    std::ofstream(file) << c.json;
    Lesson l;
    l.name = "untouched";
    std::string error;
    INFO(std::string(c.json), " -> ", error);
    CHECK_FALSE(load_lesson_file(file.string(), l, error));
    INFO(error);
    CHECK(error.find(c.expect) != std::string::npos);
    CHECK(l.name == "untouched");
  }
  // A FIFO and an endless device are refused at once (their contents were read without end before).
  const fs::path fifo = dir / "fifo.json";
  fs::remove(fifo);
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  Lesson l;
  std::string error;
  CHECK_FALSE(load_lesson_file(fifo.string(), l, error));
  CHECK(error.find("not a regular file") != std::string::npos);
  CHECK_FALSE(load_lesson_file("/dev/urandom", l, error));
  CHECK(error.find("not a regular file") != std::string::npos);
  fs::remove(fifo);
}
