// The non-finite values of a tensor set (tensor_analysis.hpp's find_nonfinite): a model that produced NaN
// is a finding the user must see, so the analysis refuses them, naming the first and the count. And given
// weights whose rows do not sum to 1 over the visible keys (weights_sum_error).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "core/formats/tensor_analysis.hpp"
#include "core/model/key_ranges.hpp"

namespace maskscope {

namespace {

// The cells the analysis reads are scanned in the order it reads them (prompt, then hidden layer 0, then
// each analysed layer's logits, weights and hidden states), in chunks converted to float as the analysis
// converts them (a float64 too large for float32 is +inf there too).
class Scanner {
 public:
  Scanner(const TensorSet& t, const std::atomic<bool>* cancel)
      : t_(t), cancel_(cancel), buffer_(kChunk), keys_(key_ranges(tensor_settings(t))) {}

  NonFinite run() {
    for (int p = 0; p < t_.P; ++p) {
      if (cancel_ && cancel_->load(std::memory_order_relaxed)) return {};
      const std::uint64_t before = f_.values;
      const std::size_t T = std::size_t(t_.T), d = std::size_t(t_.d), block = std::size_t(t_.H) * T * T;
      if (t_.hidden) scan(*t_.hidden, std::size_t(p) * (t_.L + 1) * T * d, T * d, true);
      for (int k = 0; k < t_.analysed_layers(); ++k) {
        const std::size_t l = std::size_t(t_.source_layer(k) - 1);
        scan(*t_.logits, (std::size_t(p) * t_.L + l) * block, block, false, true);
        if (t_.weights) scan(*t_.weights, (std::size_t(p) * t_.L + l) * block, block, true);
        if (t_.hidden) scan(*t_.hidden, (std::size_t(p) * (t_.L + 1) + l + 1) * T * d, T * d, true);
        for (const auto& a : t_.stages)
          if (a) {
            const std::size_t D = std::size_t(a->shape()[3]);
            scan(*a, (std::size_t(p) * t_.L + l) * T * D, T * D, true);
          }
      }
      if (f_.values > before) {
        if (f_.in_prompt.empty()) f_.in_prompt.assign(std::size_t(t_.P), 0);
        f_.in_prompt[std::size_t(p)] = 1;
        ++f_.prompts;
      }
    }
    return f_;
  }

 private:
  static constexpr std::size_t kChunk = 1 << 16;

  // Values [first, first + count) of `a`; `minus_inf` says whether -inf is refused there too. In logits
  // (`masked`: T x T rows from `first`), -inf is a mask only where the manifest's mask hides the key: at a
  // visible key it would turn the logits' means into NaN (and a row of them the weights), so it is refused.
  void scan(const NpyArray& a, std::size_t first, std::size_t count, bool minus_inf, bool masked = false) {
    const std::size_t T = std::size_t(t_.T);
    for (std::size_t at = 0; at < count; at += kChunk) {
      const std::size_t n = std::min(kChunk, count - at);
      a.read(first + at, n, buffer_.data());
      for (std::size_t i = 0; i < n; ++i) {
        const float v = buffer_[i];
        if (std::isfinite(v)) continue;
        bool visible = false;
        if (!minus_inf && v < 0 && std::isinf(v)) {
          if (!masked) continue;
          const std::size_t e = at + i;
          const int row = int((e / T) % T), key = int(e % T);
          if (key < keys_.lo[std::size_t(row)] || key > keys_.hi[std::size_t(row)]) continue;
          visible = true;
        }
        ++f_.values;
        if (std::isnan(v)) ++f_.nan;
        if (f_.first.empty())
          f_.first = place(a, first + at + i, v) + (visible ? " at a key the mask leaves visible" : "");
      }
    }
  }

  // "logits[3, 1, 0, 5, 2] = NaN (prompt 3, layer 2, head 1, i 5, j 2)": NumPy's indices, then the layer's and
  // the head's numbers (1..L, 1..H, as the JSON and the window number them).
  static std::string place(const NpyArray& a, std::size_t flat, float v) {
    const auto& shape = a.shape();
    std::vector<std::int64_t> index(shape.size());
    for (std::size_t k = shape.size(); k-- > 0;) {
      index[k] = std::int64_t(flat % std::size_t(shape[k]));
      flat /= std::size_t(shape[k]);
    }
    std::string text = a.name() + "[";
    for (std::size_t k = 0; k < index.size(); ++k) text += (k ? ", " : "") + std::to_string(index[k]);
    text += std::string("] = ") + (std::isnan(v) ? "NaN" : v > 0 ? "+inf" : "-inf");
    auto at = [&](std::size_t k) { return std::to_string(index[k]); };
    if (a.name().rfind("stages.", 0) == 0)
      text += " (prompt " + at(0) + ", layer " + std::to_string(index[1] + 1) + ", token " + at(2) + ", coordinate " +
              at(3) + ")";
    else if (a.name() == "hidden")
      text += " (prompt " + at(0) + ", layer " + at(1) + (index[1] == 0 ? " = the embeddings" : "") + ", token " +
              at(2) + ", coordinate " + at(3) + ")";
    else
      text += " (prompt " + at(0) + ", layer " + std::to_string(index[1] + 1) + ", head " +
              std::to_string(index[2] + 1) + ", i " + at(3) + ", j " + at(4) + ")";
    return text;
  }

  const TensorSet& t_;
  const std::atomic<bool>* cancel_;
  std::vector<float> buffer_;
  KeyRanges keys_;
  NonFinite f_;
};

}  // namespace

NonFinite find_nonfinite(const TensorSet& t, const std::atomic<bool>* cancel) { return Scanner(t, cancel).run(); }

// About 8 units of rounding of the type (float16 2^-11, bfloat16 2^-8): a softmax computed and stored in it
// sums to 1 within that; float32 and float64 weights within 1e-3.
double weights_sum_tolerance(NpyType type) { return type == NpyType::f16 ? 4e-3 : type == NpyType::bf16 ? 3e-2 : 1e-3; }

std::string weights_sum_error(const TensorSet& t, const std::vector<char>& left_out) {
  if (!t.weights) return "";
  const KeyRanges keys = key_ranges(tensor_settings(t));
  const double tolerance = weights_sum_tolerance(t.weights->type());
  const std::size_t T = std::size_t(t.T), nn = T * T;
  std::vector<float> w(nn);
  for (int p = 0; p < t.P; ++p) {
    if (!left_out.empty() && left_out[std::size_t(p)]) continue;
    for (int k = 0; k < t.analysed_layers(); ++k) {
      const int l = t.source_layer(k) - 1;
      for (int h = 0; h < t.H; ++h) {
        t.weights->read(((std::size_t(p) * t.L + std::size_t(l)) * t.H + std::size_t(h)) * nn, nn, w.data());
        for (std::size_t i = 0; i < T; ++i) {
          double sum = 0.0;
          for (int j = keys.lo[i]; j <= keys.hi[i]; ++j) sum += w[i * T + std::size_t(j)];
          if (std::abs(sum - 1.0) <= tolerance) continue;
          char text[32], tolerance_text[32];
          std::snprintf(text, sizeof text, "%.6g", sum);
          std::snprintf(tolerance_text, sizeof tolerance_text, "%g", tolerance);
          return "array 'weights': prompt " + std::to_string(p) + ", layer " + std::to_string(l + 1) + ", head " +
                 std::to_string(h + 1) + ", row " + std::to_string(i) + ": the weights on the visible keys " +
                 std::to_string(keys.lo[i]) + ".." + std::to_string(keys.hi[i]) + " sum to " + text +
                 ", not 1 (tolerance " + tolerance_text +
                 "). Attention weights are a softmax over the keys the mask leaves visible: check the manifest's "
                 "\"mask\", or leave \"weights\" out (null) and maskscope takes the softmax of the logits";
        }
      }
    }
  }
  return "";
}

std::string nonfinite_text(const NonFinite& f, int prompts) {
  return std::to_string(f.values) + " non-finite value" + (f.values == 1 ? "" : "s") + " (" + std::to_string(f.nan) +
         " NaN, " + std::to_string(f.values - f.nan) + " infinite) in " + std::to_string(f.prompts) + " of " +
         std::to_string(prompts) + " prompts; the first: " + f.first;
}

}  // namespace maskscope
