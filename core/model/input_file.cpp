// Reading input files without blocking and with a size cap (input_file.hpp).
#include "core/model/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace maskscope {

namespace {

[[noreturn]] void refuse(const std::string& what, const std::string& path, const std::string& why) {
  throw InputFileError(what + " '" + printable(path, 200) + "' " + why);
}

}  // namespace

std::string byte_size_text(std::uint64_t bytes) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (u < 4 && bytes >= 1024 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++u;
  }
  return std::to_string(bytes) + " " + units[u];
}

int open_input_file(const std::string& path, std::uint64_t max_bytes, const std::string& what, std::uint64_t& size) {
  if (path.empty()) throw InputFileError(what + ": the path is empty");
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    const int e = errno;
    refuse(what, path, e == ENOENT ? "does not exist" : std::string("cannot be opened (") + std::strerror(e) + ")");
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);
    refuse(what, path, std::string("cannot be read (") + std::strerror(e) + ")");
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    refuse(what, path,
           S_ISDIR(st.st_mode) ? "is a folder, not a file" : "is not a regular file (a FIFO, socket or device)");
  }
  if (std::uint64_t(st.st_size) > max_bytes) {
    ::close(fd);
    refuse(what, path,
           "is " + std::to_string(st.st_size) + " bytes, over the limit of " + byte_size_text(max_bytes) +
               " for this kind of file");
  }
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  size = std::uint64_t(st.st_size);
  return fd;
}

std::string read_input_file(const std::string& path, std::uint64_t max_bytes, const std::string& what) {
  std::uint64_t size = 0;
  const int fd = open_input_file(path, max_bytes, what, size);
  std::string content;
  content.resize(std::size_t(size) + 1);  // one byte more shows a file that grew
  std::size_t got = 0;
  for (;;) {
    if (got == content.size()) {
      if (content.size() > max_bytes) {
        ::close(fd);
        refuse(what, path, "grew past the limit of " + byte_size_text(max_bytes) + " while it was read");
      }
      content.resize(std::min<std::size_t>(content.size() * 2, std::size_t(max_bytes) + 1));
    }
    const ssize_t r = ::read(fd, content.data() + got, content.size() - got);
    if (r < 0) {
      if (errno == EINTR) continue;
      const int e = errno;
      ::close(fd);
      refuse(what, path, std::string("cannot be read (") + std::strerror(e) + ")");
    }
    if (r == 0) break;
    got += std::size_t(r);
  }
  ::close(fd);
  content.resize(got);
  return content;
}

bool read_input_file(const std::string& path, std::uint64_t max_bytes, const std::string& what, std::string& content,
                     std::string& error) {
  try {
    content = read_input_file(path, max_bytes, what);
    return true;
  } catch (const InputFileError& e) {
    error = e.what();
    return false;
  }
}

std::string printable(std::string_view text, std::size_t max_chars) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  std::size_t shown = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (shown >= max_chars) {
      out += "...";
      break;
    }
    const auto c = static_cast<unsigned char>(text[i]);
    // A whole valid UTF-8 sequence (no overlong forms, no surrogates) passes as it is.
    std::size_t len = c < 0x80                        ? 1
                      : (c >> 5) == 0x6 && c >= 0xc2  ? 2
                      : (c >> 4) == 0xe               ? 3
                      : (c >> 3) == 0x1e && c <= 0xf4 ? 4
                                                      : 0;
    if (len > 1 && i + len <= text.size()) {
      bool ok = true;
      for (std::size_t k = 1; k < len; ++k) ok = ok && (static_cast<unsigned char>(text[i + k]) >> 6) == 0x2;
      const auto c1 = static_cast<unsigned char>(text[i + 1]);
      if (ok && c == 0xe0 && c1 < 0xa0) ok = false;
      if (ok && c == 0xed && c1 >= 0xa0) ok = false;
      if (ok && c == 0xf0 && c1 < 0x90) ok = false;
      if (ok && c == 0xf4 && c1 >= 0x90) ok = false;
      if (ok) {
        out.append(text.substr(i, len));
        i += len - 1;
        ++shown;
        continue;
      }
    }
    if (len == 1 && c >= 0x20 && c != 0x7f && c != '\\') {
      out += char(c);
    } else if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
    ++shown;
  }
  return out;
}

}  // namespace maskscope
