// libFuzzer target for the preset reader (presets, and the settings objects inside them): any
// bytes must give either a Preset or a std::runtime_error with a message, never a crash, undefined
// behaviour, a hang or an uncaught exception of another kind. Build and run: tools/fuzz.sh.
#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "model/figure/figure.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return 0;  // not JSON: load_preset_file reports the byte; nothing else to reach
  try {
    const maskscope::gui::Preset p = maskscope::gui::preset_from_json(j);
    // A preset that was accepted must survive a round trip unchanged.
    const maskscope::gui::Preset again = maskscope::gui::preset_from_json(maskscope::gui::preset_to_json(p));
    if (!(again == p)) __builtin_trap();
  } catch (const std::runtime_error& e) {
    if (std::string(e.what()).empty()) __builtin_trap();  // every refusal says why
  }
  return 0;
}
