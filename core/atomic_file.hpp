// Every file maskscope writes (CLI results, presets, exports, screenshots) goes through a
// temporary name and a rename, so a crash never leaves half a file under the final name.
#pragma once

#include <functional>
#include <string>

namespace maskscope {

// `write` fills the temporary path and returns an error message, empty on success; on any
// failure the temporary file is removed and `error` says what went wrong.
bool write_atomically(const std::string& path, const std::function<std::string(const std::string& tmp)>& write,
                      std::string& error);
bool write_file_atomic(const std::string& path, const std::string& content, std::string& error);

}  // namespace maskscope
