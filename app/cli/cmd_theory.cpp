// maskscope-cli theory: the papers' closed forms as JSON (theory.hpp). n, d, alpha and gamma have run's
// defaults (Settings{}) and go through run's strict conversion and ranges (settings_text.hpp).
#include <nlohmann/json.hpp>

#include <iostream>
#include <string>
#include <vector>

#include "commands.hpp"
#include "core/model/settings_text.hpp"
#include "core/model/theory.hpp"

namespace maskscope::cli {

namespace {

// The settings theory takes, with their help; the ranges are the settings' own (Limits, settings.hpp).
struct TheorySetting {
  const char* key;
  const char* help;
};
constexpr TheorySetting kTheorySettings[] = {
    {"n", "positions 1..n [1, 512]"},
    {"d", "hidden width [1, 65536]"},
    {"alpha", "anisotropy [0, 1]; the default is run's (theory's was 0 up to version 0.3.0)"},
    {"gamma", "residual strength [0, 1]"},
};

}  // namespace

CLI::App* add_theory(CLI::App& app, TheoryFlags& t) {
  auto* theory = app.add_subcommand("theory", "print a closed form of the papers as JSON");
  theory->add_option("--kind", t.kind, "h_of_j | behind_rope_layer2 | ln_recency_s2")->required();
  for (const TheorySetting& ts : kTheorySettings)
    theory->add_option(std::string("--") + ts.key, t.text[ts.key], ts.help)->default_str(default_text(ts.key));
  theory->add_flag("--paper-scale", t.paper_scale, "h_of_j without the 1/sqrt(d) factor, as plotted in the paper")
      ->disable_flag_override();
  return theory;
}

int cmd_theory(TheoryFlags& t, const CLI::App& cmd) {
  std::vector<SettingError> errors;
  if (t.kind != "h_of_j" && t.kind != "behind_rope_layer2" && t.kind != "ln_recency_s2")
    errors.push_back(
        {"kind", "'" + t.kind + "' is not a closed form; valid: h_of_j, behind_rope_layer2, ln_recency_s2"});
  // Settings{}'s defaults, and the same strict conversion and ranges as run (strict_number.hpp).
  Settings cfg;
  for (const TheorySetting& ts : kTheorySettings)
    if (cmd.count(std::string("--") + ts.key) > 0)
      convert_flag(errors, ts.key, [&] { setting_from_text(ts.key, t.text[ts.key], cfg); });
  if (!errors.empty()) return report_invalid(errors);

  nlohmann::json out = {{"kind", t.kind}, {"n", cfg.n}, {"alpha", cfg.alpha}, {"gamma", cfg.gamma}};
  if (t.kind == "h_of_j") {
    out["d"] = cfg.d;
    out["source"] = "LayerNorm Induces Recency Bias, Eq. 42";
    out["with_inv_sqrt_d"] = !t.paper_scale;
    out["j"] = nlohmann::json::array();
    for (int j = 1; j <= cfg.n; ++j) out["j"].push_back(j);
    out["h"] = theory::ln_recency_h_curve(cfg.n, cfg.d, cfg.alpha, cfg.gamma, !t.paper_scale);
  } else if (t.kind == "behind_rope_layer2") {
    out["source"] = "Behind RoPE, Eq. 3-4 (gamma = 1), App. A.2 (gamma = 0)";
    nlohmann::json g = nlohmann::json::array(), h = nlohmann::json::array(), s = nlohmann::json::array(),
                   w = nlohmann::json::array();
    for (int i = 1; i <= cfg.n; ++i) {
      g.push_back(theory::behind_rope_g(i, cfg.alpha, cfg.gamma));
      h.push_back(theory::behind_rope_h(i, cfg.alpha, cfg.gamma));
      nlohmann::json row = nlohmann::json::array(), wrow = nlohmann::json::array();
      for (int j = 1; j <= cfg.n; ++j) {
        row.push_back(j <= i ? nlohmann::json(theory::behind_rope_layer2_score(i, j, cfg.alpha, cfg.gamma))
                             : nlohmann::json(nullptr));
        wrow.push_back(j <= i ? nlohmann::json(theory::behind_rope_layer1_weight(i, j, cfg.alpha))
                              : nlohmann::json(nullptr));
      }
      s.push_back(std::move(row));
      w.push_back(std::move(wrow));
    }
    out["g"] = g;
    out["h"] = h;
    out["layer1_weight"] = w;
    out["layer2_score"] = s;
  } else {
    out["d"] = cfg.d;
    out["source"] = "LayerNorm Induces Recency Bias, Eq. 11 (alpha = 0, gamma = 0)";
    nlohmann::json s = nlohmann::json::array();
    for (int i = 1; i <= cfg.n; ++i) {
      nlohmann::json row = nlohmann::json::array();
      for (int j = 1; j <= cfg.n; ++j)
        row.push_back(j <= i ? nlohmann::json(theory::ln_recency_s2(i, j, cfg.d)) : nlohmann::json(nullptr));
      s.push_back(std::move(row));
    }
    out["layer2_score"] = s;
  }
  std::cout << out.dump(1) << "\n";
  return 0;
}

}  // namespace maskscope::cli
