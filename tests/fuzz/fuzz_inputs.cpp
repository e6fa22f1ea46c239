// libFuzzer target for the readers of everything maskscope reads from files: the first byte picks the
// reader, the rest is the file. Any bytes must give either a value or a std::runtime_error with a message,
// never a crash, undefined behaviour, a hang or an uncaught exception of another kind. Build and run:
// tools/fuzz.sh. Seeds: tests/fuzz/corpus (each file's first byte is its reader's).
//   'p' presets (and the settings objects inside them), 's' .msweep sweep shards, 'l' lessons,
//   'i' token files as ids, 'c' token files as characters.
#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "core/model/token_file.hpp"
#include "core/run/kernel_info.hpp"
#include "core/run/sweep_shard.hpp"
#include "common/figure/figure.hpp"
#include "common/lesson/lesson.hpp"

// The simulation kernels are not in this build (maskscope_core_io has none): the kernel's name, which a sweep
// file's writer asks for and no reader does, is a stand-in.
std::string maskscope::kernel_name(const Settings&, KernelChoice) { return "fuzz"; }

namespace {

void preset(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return;  // not JSON: load_preset_file reports the byte; nothing else to reach
  const maskscope::gui::Preset p = maskscope::gui::preset_from_json(j);
  // A preset that was accepted must survive a round trip unchanged.
  const maskscope::gui::Preset again = maskscope::gui::preset_from_json(maskscope::gui::preset_to_json(p));
  if (!(again == p)) __builtin_trap();
}

void sweep_shard(const std::string& text) {
  const maskscope::SweepShard s = maskscope::parse_sweep_shard(text, "fuzz.msweep");
  // An accepted shard writes back to the text it came from, and joins alone into its file or CSV.
  if (maskscope::sweep_shard_text(s) != text) __builtin_trap();
  std::vector<std::pair<maskscope::SweepShard, std::string>> parts;
  parts.emplace_back(s, "fuzz.msweep");
  const maskscope::SweepShard whole = maskscope::join_sweep_shards(std::move(parts), false);
  if (whole.n == 1) {
    (void)maskscope::sweep_shard_json(whole);
    (void)maskscope::sweep_shard_csv(whole);
  }
}

void lesson(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return;
  const maskscope::gui::Lesson l = maskscope::gui::lesson_from_json(j, "fuzz.json");
  for (std::size_t k = 0; k < l.steps.size(); ++k) (void)maskscope::gui::lesson_settings(l, k);
}

void tokens(const std::string& text, maskscope::TokensFormat format) {
  const maskscope::TokenSequences t = maskscope::parse_token_sequences(text, format, "fuzz.txt");
  if (t.lines < 1 || t.length < 1 || t.ids.size() != std::size_t(t.lines) * std::size_t(t.length)) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    switch (data[0]) {
      case 'p': preset(text); break;
      case 's': sweep_shard(text); break;
      case 'l': lesson(text); break;
      case 'i': tokens(text, maskscope::TokensFormat::ids); break;
      case 'c': tokens(text, maskscope::TokensFormat::chars); break;
      default: break;
    }
  } catch (const std::runtime_error& e) {
    if (std::string(e.what()).empty()) __builtin_trap();  // every refusal says why
  }
  return 0;
}
