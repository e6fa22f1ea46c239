// Every file maskscope writes (CLI results, .msum and .msweep parts, tensors, presets, exports,
// screenshots) goes through write_atomically: the bytes go to a fresh temporary beside the target,
// created with O_CREAT | O_EXCL | O_NOFOLLOW under an unpredictable name (so a planted link is
// never followed), synced, and renamed over the target. A crash never leaves half a file under the
// final name; no write replaces what is not a regular file (a link, FIFO, device or folder); and a
// target that another writer replaced since check_output_path looked at it is not overwritten.
#pragma once

#include <functional>
#include <string>

namespace maskscope {

// Temporaries are ".NAME.PID.RANDOM.maskscope-tmp" in the target's folder: recognisable, and the
// process id tells whether the writer is still alive, so what a killed one left can be removed.
constexpr const char* kTemporarySuffix = ".maskscope-tmp";

// Empty if `path` can be written (created or replaced): its folder exists and is writable, the
// name and its temporary fit the file system, and an existing entry is a regular file. Otherwise
// the reason, naming the path. Call it before a long computation: it also records what is at
// `path` now, and write_atomically later refuses to replace a file that another writer put there
// in between ("claim").
std::string check_output_path(const std::string& path);

// Writes `path` through a temporary: `write` gets the temporary's open descriptor and returns an
// error message, empty on success (write_all helps). On any failure the temporary is removed and
// `error` says what went wrong; the target is then as it was.
bool write_atomically(const std::string& path, const std::function<std::string(int fd)>& write, std::string& error);
bool write_file_atomic(const std::string& path, const std::string& content, std::string& error);
// Writes all `size` bytes to `fd` (retrying short writes); an error message naming `name`, or empty.
std::string write_all(int fd, const void* data, std::size_t size, const std::string& name);

// A folder written whole: `fill` writes its files into a fresh private temporary folder beside
// `folder` (its argument) and returns an error or empty; then the temporary takes the folder's
// place in one rename (an existing folder is exchanged and removed). A failure leaves `folder` as
// it was. The caller checks beforehand that an existing `folder` may be replaced.
bool write_folder_atomically(const std::string& folder, const std::function<std::string(const std::string& tmp)>& fill,
                             std::string& error);

// Removes temporaries that a killed process left in `folder` (its own are kept while it runs);
// returns how many.
int remove_stale_temporaries(const std::string& folder);

}  // namespace maskscope
