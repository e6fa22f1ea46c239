// Temporary file plus rename.
#include "atomic_file.hpp"

#include <filesystem>
#include <fstream>

namespace maskscope {

bool write_atomically(const std::string& path, const std::function<std::string(const std::string& tmp)>& write,
                      std::string& error) {
  const std::string tmp = path + ".tmp";
  std::error_code ec;
  if (const std::string failed = write(tmp); !failed.empty()) {
    error = failed;
    std::filesystem::remove(tmp, ec);
    return false;
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    error = "cannot rename '" + tmp + "' to '" + path + "': " + ec.message();
    std::filesystem::remove(tmp, ec);
    return false;
  }
  return true;
}

bool write_file_atomic(const std::string& path, const std::string& content, std::string& error) {
  return write_atomically(
      path,
      [&](const std::string& tmp) {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        out.write(content.data(), std::streamsize(content.size()));
        return out.flush() ? std::string() : "cannot write '" + tmp + "'";
      },
      error);
}

}  // namespace maskscope
