// Every file maskscope writes (CLI results, presets, exports, screenshots) goes through a
// temporary name and a rename, so a crash never leaves half a file under the final name; and no
// write ever replaces what is not a regular file (a FIFO, a device, a symbolic link, a folder).
#pragma once

#include <functional>
#include <string>

namespace maskscope {

// The temporary name beside `path`: ".NAME.maskscope-tmp" in the same folder, recognisable so
// that a later export can remove what a killed one left (remove_stale_temporaries).
std::string temporary_path(const std::string& path);
constexpr const char* kTemporarySuffix = ".maskscope-tmp";

// Empty if `path` can be written (created or replaced): its folder exists and is writable, the
// name and its temporary fit the file system, and an existing entry is a regular file. Otherwise
// the reason, naming the path. Call it before a long computation.
std::string check_output_path(const std::string& path);

// `write` fills the temporary path and returns an error message, empty on success; on any
// failure the temporary file is removed and `error` says what went wrong.
bool write_atomically(const std::string& path, const std::function<std::string(const std::string& tmp)>& write,
                      std::string& error);
bool write_file_atomic(const std::string& path, const std::string& content, std::string& error);

// Removes our own temporaries (".*.maskscope-tmp") that a killed run left in `folder`; returns how many.
int remove_stale_temporaries(const std::string& folder);

}  // namespace maskscope
