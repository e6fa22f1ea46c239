// Temporary file plus rename, destination checks, and stale-temporary cleanup.
#include "core/formats/atomic_file.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace maskscope {

namespace fs = std::filesystem;

std::string temporary_path(const std::string& path) {
  const fs::path p(path);
  std::string name = ".";
  name += p.filename().string();
  name += kTemporarySuffix;
  return (p.parent_path() / name).string();
}

std::string check_output_path(const std::string& path) {
  if (path.empty()) return "the output path is empty";
  if (path.back() == '/') return "'" + path + "' names a folder; give a file name";
  const fs::path p(path);
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(p, ec);
  if (!ec && fs::exists(st)) {
    if (fs::is_directory(st)) return "'" + path + "' is a folder; give a file name";
    if (!fs::is_regular_file(st))
      return "'" + path + "' exists and is not a regular file (a link, FIFO or device); refusing to replace it";
  }
  const std::string name = p.filename().string();
  if (name.size() + std::string(kTemporarySuffix).size() + 1 > 255)
    return "the file name '" + name.substr(0, 40) + "...' is too long (" + std::to_string(name.size()) +
           " characters; at most 238)";
  const fs::path parent = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  if (!fs::is_directory(parent, ec)) return "the folder '" + parent.string() + "' does not exist";
  if (access(parent.c_str(), W_OK) != 0) return "the folder '" + parent.string() + "' is not writable";
  return "";
}

bool write_atomically(const std::string& path, const std::function<std::string(const std::string& tmp)>& write,
                      std::string& error) {
  if (std::string why = check_output_path(path); !why.empty()) {
    error = "cannot write: " + why;
    return false;
  }
  const std::string tmp = temporary_path(path);
  std::error_code ec;
  if (const std::string failed = write(tmp); !failed.empty()) {
    error = failed;
    fs::remove(tmp, ec);
    return false;
  }
  fs::rename(tmp, path, ec);
  if (ec) {
    error = "cannot rename '" + tmp + "' to '" + path + "': " + ec.message();
    fs::remove(tmp, ec);
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

int remove_stale_temporaries(const std::string& folder) {
  int removed = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(folder, ec)) {
    const std::string name = entry.path().filename().string();
    const std::string suffix = kTemporarySuffix;
    if (name.size() > suffix.size() + 1 && name[0] == '.' &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0 && entry.is_regular_file(ec)) {
      std::error_code rm;
      if (fs::remove(entry.path(), rm)) ++removed;
    }
  }
  return removed;
}

}  // namespace maskscope
