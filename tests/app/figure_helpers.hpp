// Shared helpers of the figure and preset tests: a tiny setting, a two-row figure, reference runs
// computed outside any figure code, and files read back from a scratch folder.
#pragma once

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/run/runner.hpp"
#include "common/figure/figure.hpp"

namespace maskscope::test {

namespace fs = std::filesystem;
using gui::FigureRow;
using gui::FigureSpec;
using gui::Quantity;
using gui::Transform;

inline Settings tiny() {
  Settings s;
  s.n = 6;
  s.d = 8;
  s.layers = 2;
  s.alpha = 0.5;
  s.samples = 4000;
  s.seed = 7;
  s.threads = 2;
  return s;
}

// A small random-weight network (2 heads, 2 layers, residual) for the table and line figures.
inline Settings random_network() {
  Settings s;
  s.model = Model::random_weights;
  s.n = 6;
  s.d = 16;
  s.heads = 2;
  s.layers = 2;
  s.gamma = 1.0;
  s.samples = 300;
  s.threads = 2;
  return s;
}

inline FigureSpec two_row_spec() {
  FigureSpec f;
  f.title = "test";
  f.layers = {1, 2};
  const FigureRow a{"A", tiny(), Quantity::score, Transform::raw};
  FigureRow b{"B", tiny(), Quantity::score, Transform::raw};  // A with the residual on
  b.settings.gamma = 1.0;
  f.rows = {a, b};
  return f;
}

// Snapshots computed once per distinct simulation, outside any figure code.
struct Reference {
  std::vector<std::pair<Settings, std::shared_ptr<const Snapshot>>> runs;
  std::shared_ptr<const Snapshot> operator()(const Settings& s) {
    for (auto& [k, v] : runs)
      if (k.same_simulation(s)) return v;
    runs.emplace_back(s, run_to_completion(s));
    return runs.back().second;
  }
};

inline std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::vector<double> parse_csv(const std::string& text) {
  std::vector<double> v;
  std::stringstream ss(text);
  std::string cell;
  while (std::getline(ss, cell, '\n')) {
    std::stringstream line(cell);
    std::string x;
    while (std::getline(line, x, ',')) v.push_back(x == "nan" ? NAN : std::strtod(x.c_str(), nullptr));
  }
  return v;
}

inline fs::path scratch(const std::string& name) {
  fs::path p = fs::path(MASKSCOPE_TEST_WORK) / name;
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

}  // namespace maskscope::test
