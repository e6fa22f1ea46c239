// maskscope-cli leakage: absolute-position leakage dR^2 (Ruscio et al. Eq. 4, docs/model.md section 8) of a
// baseline and its identity-RoPE, scrambled-RoPE and bidirectional ablations: Table 6 in miniature.
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "core/formats/result_json.hpp"
#include "core/model/version.hpp"
#include "core/run/resources.hpp"
#include "core/run/runner.hpp"

namespace maskscope::cli {

namespace {

struct Ablation {
  const char* name;   // JSON key
  const char* title;  // table header
  Settings s;
  bool applies = true;
  std::shared_ptr<const Snapshot> snap = nullptr;
};

// A ratio to the baseline means something only when the baseline's dR^2 stands out of its noise.
double ratio_to(double a, const Leakage& base) {
  return base.delta_r2.mean > 3 * base.delta_r2.se ? leakage_ratio(a, base.delta_r2.mean) : NAN;
}

nlohmann::json or_null(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

std::string with_se(double v, double se) {
  if (!std::isfinite(v)) return "n/a";
  char b[64];
  std::snprintf(b, sizeof b, "%.3g \u00b1 %.2g", v, se);
  return b;
}

}  // namespace

CLI::App* add_leakage(CLI::App& app, LeakageFlags& f) {
  auto* leakage = app.add_subcommand("leakage",
                                     "absolute-position leakage dR^2: the baseline and its identity-RoPE, "
                                     "scrambled-RoPE and bidirectional ablations (Ruscio et al. Table 6)");
  add_setting_flags(*leakage, f.run);
  leakage->add_option("--out", f.run.out, "output file (default: standard output)");
  leakage->add_flag("--quiet", f.run.quiet, "no progress on stderr")->disable_flag_override();
  leakage->add_flag("--table", f.table, "a readable table instead of JSON")->disable_flag_override();
  return leakage;
}

int cmd_leakage(LeakageFlags& flags, const CLI::App& cmd) {
  RunFlags& f = flags.run;
  const bool table = flags.table;
  auto errors = finish_settings(f, cmd);
  if (f.s.mask != MaskKind::causal)
    errors.push_back(
        {"mask", "the leakage table compares the causal mask with its bidirectional ablation; use --mask causal"});
  if (!errors.empty()) return report_invalid(errors);
  // Memory, as `run` checks it: the four runs one after the other, each beside the finished ones' snapshots.
  const RunMemoryPlan plan = plan_run_memory(f.s, resolved_threads(f.s), 3 * moments_bytes(f.s));
  if (!plan.refusal.empty()) return report_invalid({{"n", plan.refusal}});
  if (plan.threads < resolved_threads(f.s)) f.s.threads = plan.threads;
  // Ablations on the same random draws (same seed): each differs from the baseline in one thing (004 Sec. 4).
  std::vector<Ablation> rows = {{"baseline", "baseline", f.s},
                                {"identity_rope", "identity RoPE", f.s},
                                {"scrambled_rope", "scrambled RoPE", f.s},
                                {"bidirectional", "bidirectional", f.s}};
  rows[1].s.rope_base = 0;
  rows[1].s.rope_scramble = 0;
  rows[2].s.rope_scramble = f.s.rope_scramble != 0 ? f.s.rope_scramble : 1;
  rows[3].s.mask = MaskKind::bidirectional;
  if (!f.s.rope()) rows[1].applies = rows[2].applies = false;  // nothing to remove or scramble
  if (f.s.rope_scramble != 0) rows[2].applies = false;         // the baseline is already scrambled
  for (Ablation& a : rows) {
    if (!a.applies) continue;
    if (!f.quiet) std::cerr << "maskscope-cli: leakage: " << a.title << " (" << f.s.samples << " samples)\n";
    a.snap = run_to_completion(a.s);
  }
  const auto& base = *rows[0].snap;
  nlohmann::json ablations = nlohmann::json::array(), layers = nlohmann::json::array();
  for (const Ablation& a : rows) {
    nlohmann::json entry = {{"name", a.name}, {"applies", a.applies}, {"config", settings_to_json(a.s)}};
    if (a.snap) {
      nlohmann::json ls = nlohmann::json::array();
      for (const auto& l : a.snap->layers) ls.push_back(leakage_layer_json(l));  // as `run` writes them
      entry["layers"] = std::move(ls);
    }
    ablations.push_back(std::move(entry));
  }
  auto cell = [&](const Ablation& a, std::size_t l) -> const Leakage* {
    return a.snap && l < a.snap->layers.size() ? &a.snap->layers[l].leakage : nullptr;
  };
  for (std::size_t l = 0; l < base.layers.size(); ++l) {
    const Leakage& b = *cell(rows[0], l);
    nlohmann::json row = {{"layer", int(l) + 1}};
    for (std::size_t k = 0; k < rows.size(); ++k) {
      const Leakage* c = cell(rows[k], l);
      nlohmann::json estimate = nlohmann::json::object();
      if (c) add_estimate(estimate, "delta_r2", c->delta_r2, false);
      row[rows[k].name] = c ? estimate : nlohmann::json(nullptr);
      if (k > 0)
        row[std::string(rows[k].name) + "_ratio"] =
            c ? ratio_json(significant_ratio(c->delta_r2, b.delta_r2)) : nlohmann::json(nullptr);
    }
    const Leakage& bi = *cell(rows[3], l);
    row["causal_mask_share"] = or_null(1.0 - ratio_to(bi.delta_r2.mean, b));  // Ruscio Eq. 5
    // r_l = dR^2_bidirectional / dR^2_causal, the residual-stream share (004 Table 8), SE by the delta method.
    row["residual_stream_share"] = ratio_json(residual_stream_share(bi, b));
    // The weight on key 0 (the attention sink, docs/model.md section 10) of the causal run and its twin.
    const LayerStats& base_layer = base.layers[l];
    const LayerStats& bi_layer = rows[3].snap->layers[l];
    for (const MetricInfo& m : metric_table())
      if (m.group == MetricGroup::attention_sink) {
        add_estimate(row, m.key, m.of(base_layer), m.ties);
        add_estimate(row, std::string(m.key) + "_bidirectional", m.of(bi_layer), m.ties);
      }
    layers.push_back(std::move(row));
  }
  nlohmann::json out = {{"source", "Ruscio et al. (004), Table 6 and Eq. 5; docs/model.md section 8"},
                        {"config", settings_to_json(f.s)},
                        {"samples", base.samples_done},
                        {"ablations", std::move(ablations)},
                        {"layers", std::move(layers)},
                        {"maskscope_version", kVersion}};
  std::string text = out.dump(1) + "\n";
  if (table) {
    char buf[256];
    std::string t = "Absolute-position leakage dR^2 of the logits (Ruscio et al. Table 6), " + short_label(f.s) +
                    ", n " + std::to_string(f.s.n) + ", d " + std::to_string(f.s.d) + ", " +
                    std::to_string(base.samples_done) + " samples, seed " + std::to_string(f.s.seed) + "\n";
    std::snprintf(buf, sizeof buf, "%-6s %-22s %-22s %-22s %-22s %9s %9s %-16s %10s %-18s\n", "layer", "baseline",
                  "identity RoPE", "scrambled RoPE", "bidirectional", "id/base", "scr/base", "r_l = bi/base",
                  "mask share", "weight on key 0");
    t += buf;
    auto pm = [](const Leakage* c) { return c ? with_se(c->delta_r2.mean, c->delta_r2.se) : std::string("n/a"); };
    auto rt = [](double v) {
      char b[32];
      if (!std::isfinite(v)) return std::string("n/a");
      std::snprintf(b, sizeof b, "%.3g", v);
      return std::string(b);
    };
    for (std::size_t l = 0; l < base.layers.size(); ++l) {
      const Leakage& b = *cell(rows[0], l);
      auto r = [&](std::size_t k) {
        const Leakage* c = cell(rows[k], l);
        return rt(c ? ratio_to(c->delta_r2.mean, b) : NAN);
      };
      const Leakage* bi = cell(rows[3], l);
      const ResidualShare share = residual_stream_share(*bi, b);
      const std::string r_l = with_se(share.value, share.se);
      const LayerStats& bl = base.layers[l];
      std::snprintf(buf, sizeof buf, "%-6zu %-22s %-22s %-22s %-22s %9s %9s %-16s %10s %-18s\n", l + 1, pm(&b).c_str(),
                    pm(cell(rows[1], l)).c_str(), pm(cell(rows[2], l)).c_str(), pm(bi).c_str(), r(1).c_str(),
                    r(2).c_str(), r_l.c_str(), rt(1.0 - share.value).c_str(),
                    with_se(bl.sink_weight.mean, bl.sink_weight.se).c_str());
      t += buf;
    }
    if (!f.s.rope()) t += "(identity / scrambled RoPE: n/a, the baseline has no RoPE; add --rope 10000)\n";
    t += "mask share = 1 - r_l = 1 - dR^2_bidirectional / dR^2_causal (Ruscio Eq. 5, Table 8; r_l's SE by the delta "
         "method); \u00b1 one standard error; ratios only where the baseline's dR^2 exceeds 3 SE\n"
         "weight on key 0: per sample the mean of A_i0 over query rows i >= 1 (causal run), averaged over samples "
         "(docs/model.md section 10)\n";
    text = t;
  }
  return emit(f.out, text);
}

}  // namespace maskscope::cli
