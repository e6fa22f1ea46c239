// Every file maskscope reads (presets, lessons, token files, manifests, tensors, .msum and .msweep
// parts, settings) is opened here: without blocking (a FIFO's open never waits for a writer), then
// checked by fstat to be a regular file, with a size cap, before a byte is read. Messages that
// quote what a file holds go through printable(), so no terminal escape or NUL reaches the screen.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace maskscope {

// Size caps, one per kind of input (bytes).
constexpr std::uint64_t kMaxTextInputBytes = 16ull << 20;   // presets, lessons, JSON settings and manifests
constexpr std::uint64_t kMaxTokenFileBytes = 256ull << 20;  // token sequence files
constexpr std::uint64_t kMaxPartFileBytes = 4ull << 30;     // .msum and .msweep parts
constexpr std::uint64_t kMaxTensorFileBytes = 1ull << 40;   // .npy arrays (mapped, not read)

// Thrown for an input that cannot be read; what() names `what` and the path.
struct InputFileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Opens `path` read-only with O_NONBLOCK (then restores blocking reads), refuses anything fstat
// does not call a regular file and any file over `max_bytes`. Returns the descriptor (the caller
// closes it) and sets `size`. `what` names the input in messages ("the preset", "the token file").
int open_input_file(const std::string& path, std::uint64_t max_bytes, const std::string& what, std::uint64_t& size);

// open_input_file, then reads the whole file (refusing one that grows past the cap while read).
std::string read_input_file(const std::string& path, std::uint64_t max_bytes, const std::string& what);
// The same without exceptions: false and `error` set on failure.
bool read_input_file(const std::string& path, std::uint64_t max_bytes, const std::string& what, std::string& content,
                     std::string& error);

// `text` safe to print: control characters, DEL, NUL and invalid UTF-8 become \n, \t, \xNN escapes;
// longer than `max_chars` it is cut with "...". Use it for any input quoted in a message.
std::string printable(std::string_view text, std::size_t max_chars = 80);

// "16 MiB", "4 GiB": a byte count for messages.
std::string byte_size_text(std::uint64_t bytes);

}  // namespace maskscope
