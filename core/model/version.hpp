// The maskscope version, written into results and presets.
#pragma once

namespace maskscope {
inline constexpr const char* kVersion = "0.6.0";
}
