// Temporary file plus rename, destination checks and claims, folder swaps, and stale-temporary
// cleanup (atomic_file.hpp).
#include "core/formats/atomic_file.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <random>

namespace maskscope {

namespace fs = std::filesystem;

namespace {

// renameat2's flags (linux/fs.h), called through syscall() so that no particular glibc is needed.
constexpr unsigned kRenameNoReplace = 1u << 0;
constexpr unsigned kRenameExchange = 1u << 1;

int rename2(const char* from, const char* to, unsigned flags) {
#ifdef SYS_renameat2
  return int(::syscall(SYS_renameat2, AT_FDCWD, from, AT_FDCWD, to, flags));
#else
  (void)from, (void)to, (void)flags;
  errno = ENOSYS;
  return -1;
#endif
}

std::string errno_text(int e) { return std::strerror(e); }

// 'text', built without a chain of + on a literal (GCC 12's false -Wrestrict warning).
std::string in_quotes(const std::string& text) {
  std::string q(1, '\'');
  q.append(text);
  q.push_back('\'');
  return q;
}

fs::path folder_of(const fs::path& p) { return p.parent_path().empty() ? fs::path(".") : p.parent_path(); }

// What was at a path when check_output_path looked: the claim that write_atomically holds the
// target to. Keyed by the absolute, lexically normal path.
struct Claim {
  bool existed = false;
  dev_t dev = 0;
  ino_t ino = 0;
  off_t size = 0;
  timespec mtime{};
};
std::mutex claims_mutex;
std::map<std::string, Claim> claims;

std::string claim_key(const std::string& path) {
  std::error_code ec;
  const fs::path abs = fs::absolute(path, ec);
  return (ec ? fs::path(path) : abs).lexically_normal().string();
}

Claim look_at(const std::string& path) {
  Claim c;
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    c.existed = true;
    c.dev = st.st_dev;
    c.ino = st.st_ino;
    c.size = st.st_size;
    c.mtime = st.st_mtim;
  }
  return c;
}

bool same(const Claim& a, const Claim& b) {
  if (a.existed != b.existed) return false;
  return !a.existed || (a.dev == b.dev && a.ino == b.ino && a.size == b.size && a.mtime.tv_sec == b.mtime.tv_sec &&
                        a.mtime.tv_nsec == b.mtime.tv_nsec);
}

std::string check_destination(const std::string& path) {
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
  // ".NAME.PID.RANDOM.maskscope-tmp": PID at most 10 digits, RANDOM 12 characters.
  const std::size_t extra = 1 + 1 + 10 + 1 + 12 + std::strlen(kTemporarySuffix);
  if (name.size() + extra > 255)
    return "the file name '" + name.substr(0, 40) + "...' is too long (" + std::to_string(name.size()) +
           " characters; at most " + std::to_string(255 - extra) + ")";
  const fs::path parent = folder_of(p);
  if (!fs::is_directory(parent, ec)) return "the folder '" + parent.string() + "' does not exist";
  if (::access(parent.c_str(), W_OK) != 0) return "the folder '" + parent.string() + "' is not writable";
  return "";
}

std::string random_tag() {
  static const char* chars = "abcdefghijklmnopqrstuvwxyz0123456789";
  thread_local std::mt19937_64 gen{std::random_device{}() ^ (std::uint64_t(::getpid()) << 32)};
  std::string s(12, 'x');
  for (char& c : s) c = chars[gen() % 36];
  return s;
}

// A fresh temporary name beside `target` for this process.
std::string temporary_name(const fs::path& target) {
  std::string name(".");  // appended piece by piece: GCC 12 warns falsely (-Wrestrict) on a chain of +
  name.append(target.filename().string());
  name.append(".");
  name.append(std::to_string(::getpid()));
  name.append(".");
  name.append(random_tag());
  name.append(kTemporarySuffix);
  return (folder_of(target) / name).string();
}

// The writer's process id if `name` is one of our temporaries (".NAME.PID.RANDOM.maskscope-tmp",
// `target_name` = NAME when given), 0 for the old ".NAME.maskscope-tmp" form, -1 otherwise.
long temporary_owner(const std::string& name, const std::string& target_name) {
  const std::string suffix = kTemporarySuffix;
  if (name.size() <= suffix.size() + 1 || name[0] != '.' ||
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
    return -1;
  const std::string stem = name.substr(1, name.size() - suffix.size() - 1);  // NAME.PID.RANDOM or NAME
  if (!target_name.empty() && stem == target_name) return 0;
  const auto dot2 = stem.rfind('.');
  if (dot2 == std::string::npos || stem.size() - dot2 - 1 != 12) return target_name.empty() ? 0 : -1;
  const auto dot1 = stem.rfind('.', dot2 - 1);
  if (dot1 == std::string::npos || dot1 + 1 >= dot2) return target_name.empty() ? 0 : -1;
  const std::string pid = stem.substr(dot1 + 1, dot2 - dot1 - 1);
  if (pid.size() > 10 || pid.find_first_not_of("0123456789") != std::string::npos) return target_name.empty() ? 0 : -1;
  if (!target_name.empty() && stem.substr(0, dot1) != target_name) return -1;
  return std::stol(pid);
}

bool process_gone(long pid) { return pid <= 0 || (::kill(pid_t(pid), 0) != 0 && errno == ESRCH); }

// Removes the temporaries of dead writers in `folder` (only those of `target_name` when given).
int remove_stale(const fs::path& folder, const std::string& target_name) {
  int removed = 0;
  DIR* dir = ::opendir(folder.c_str());
  if (!dir) return 0;
  while (const dirent* e = ::readdir(dir)) {
    const std::string name = e->d_name;
    const long owner = temporary_owner(name, target_name);
    if (owner < 0 || !process_gone(owner)) continue;
    const fs::path p = folder / name;
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0) continue;
    std::error_code ec;
    if (S_ISREG(st.st_mode)) {
      if (::unlink(p.c_str()) == 0) ++removed;
    } else if (S_ISDIR(st.st_mode)) {  // a folder being written by write_folder_atomically
      if (fs::remove_all(p, ec) > 0 && !ec) ++removed;
    }
  }
  ::closedir(dir);
  return removed;
}

// The process's umask, read without changing it (umask() would, for every thread at once).
mode_t current_umask() {
  if (FILE* f = std::fopen("/proc/self/status", "re")) {
    char line[256];
    unsigned mask = 022;
    while (std::fgets(line, sizeof line, f))
      if (std::sscanf(line, "Umask: %o", &mask) == 1) break;
    std::fclose(f);
    return mode_t(mask & 0777);
  }
  return 022;
}

void sync_folder(const fs::path& folder) {
  const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

}  // namespace

std::string check_output_path(const std::string& path) {
  std::string why = check_destination(path);
  if (why.empty()) {
    std::lock_guard lock(claims_mutex);
    claims[claim_key(path)] = look_at(path);
  }
  return why;
}

std::string write_all(int fd, const void* data, std::size_t size, const std::string& name) {
  const auto* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t w = ::write(fd, p, std::min<std::size_t>(size, std::size_t(1) << 30));
    if (w < 0) {
      if (errno == EINTR) continue;
      return "cannot write '" + name + "': " + errno_text(errno);
    }
    p += w;
    size -= std::size_t(w);
  }
  return "";
}

bool write_atomically(const std::string& path, const std::function<std::string(int fd)>& write, std::string& error) {
  if (std::string why = check_destination(path); !why.empty()) {
    error = "cannot write: " + why;
    return false;
  }
  const fs::path target(path);
  remove_stale(folder_of(target), target.filename().string());  // what a killed writer of this file left
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; attempt < 16 && fd < 0; ++attempt) {
    tmp = temporary_name(target);
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) {
    error = "cannot create a temporary file beside '" + path + "': " + errno_text(errno);
    return false;
  }
  std::string failed = write(fd);
  if (failed.empty() && ::fsync(fd) != 0) failed = "cannot write '" + path + "': " + errno_text(errno);
  if (::close(fd) != 0 && failed.empty()) failed = "cannot write '" + path + "': " + errno_text(errno);
  if (!failed.empty()) {
    error = failed;
    ::unlink(tmp.c_str());
    return false;
  }
  // The claim: what check_output_path saw, if it looked at this path.
  const std::string key = claim_key(path);
  std::lock_guard lock(claims_mutex);
  const auto claim = claims.find(key);
  const Claim now = look_at(path);
  const bool claimed = claim != claims.end();
  if (claimed && !same(claim->second, now)) {
    ::unlink(tmp.c_str());
    error = "'" + path + "' was " + (claim->second.existed ? "replaced" : "created") +
            " by another writer while this one ran; not overwriting it (choose another output path, or run again)";
    return false;
  }
  int renamed = -1;
  if (!now.existed) {
    // Nothing there: a rename that fails if another writer gets there first.
    renamed = rename2(tmp.c_str(), path.c_str(), kRenameNoReplace);
    if (renamed != 0 && errno == EEXIST) {
      ::unlink(tmp.c_str());
      error = "'" + path + "' was created by another writer while this one ran; not overwriting it";
      return false;
    }
  }
  if (renamed != 0) renamed = ::rename(tmp.c_str(), path.c_str());  // ENOSYS/EINVAL above, or a file to replace
  if (renamed != 0) {
    error = "cannot rename '" + tmp + "' to '" + path + "': " + errno_text(errno);
    ::unlink(tmp.c_str());
    return false;
  }
  sync_folder(folder_of(target));
  if (claimed) claim->second = look_at(path);  // the next write of this process replaces its own file
  return true;
}

bool write_file_atomic(const std::string& path, const std::string& content, std::string& error) {
  return write_atomically(
      path, [&](int fd) { return write_all(fd, content.data(), content.size(), path); }, error);
}

bool write_folder_atomically(const std::string& folder, const std::function<std::string(const std::string& tmp)>& fill,
                             std::string& error) {
  fs::path target(folder);
  if (target.filename().empty()) target = target.parent_path();  // "out/" names the folder "out"
  const fs::path parent = folder_of(target);
  std::error_code ec;
  if (!fs::is_directory(parent, ec)) {
    error = "the folder '" + parent.string() + "' does not exist";
    return false;
  }
  struct stat st {};
  const bool existed = ::lstat(target.c_str(), &st) == 0;
  if (existed && !S_ISDIR(st.st_mode)) {
    error = in_quotes(target.string()) + " exists and is not a folder; refusing to replace it";
    return false;
  }
  remove_stale(parent, target.filename().string());
  std::string tmp;
  bool made = false;
  for (int attempt = 0; attempt < 16 && !made; ++attempt) {
    tmp = temporary_name(target);
    made = ::mkdir(tmp.c_str(), 0700) == 0;
    if (!made && errno != EEXIST) break;
  }
  if (!made) {
    error = "cannot create a temporary folder beside " + in_quotes(target.string()) + ": " + errno_text(errno);
    return false;
  }
  if (std::string failed = fill(tmp); !failed.empty()) {
    error = failed;
    fs::remove_all(tmp, ec);
    return false;
  }
  // The folder gets the permissions a new folder would have (mkdir's 0777 less the umask).
  ::chmod(tmp.c_str(), 0777 & ~current_umask());
  sync_folder(tmp);
  int done = -1;
  if (!existed) {
    done = rename2(tmp.c_str(), target.c_str(), kRenameNoReplace);
    if (done != 0 && errno == EEXIST) {
      fs::remove_all(tmp, ec);
      error = in_quotes(target.string()) + " was created by another writer while this one ran; not replacing it";
      return false;
    }
    if (done != 0)
      done = ::rename(tmp.c_str(), target.c_str());  // no renameat2 here: rename fails on a non-empty folder
  } else {
    // Exchange the two folders in one step, then remove the old one (now under the temporary name).
    done = rename2(tmp.c_str(), target.c_str(), kRenameExchange);
    if (done != 0 && (errno == ENOSYS || errno == EINVAL)) {
      const std::string old = temporary_name(target);
      done = ::rename(target.c_str(), old.c_str());
      if (done == 0) {
        done = ::rename(tmp.c_str(), target.c_str());
        if (done != 0) ::rename(old.c_str(), target.c_str());  // put the old folder back
      }
      if (done == 0) tmp = old;
    }
  }
  if (done != 0) {
    error = "cannot move the new folder to " + in_quotes(target.string()) + ": " + errno_text(errno);
    fs::remove_all(tmp, ec);
    return false;
  }
  if (existed) fs::remove_all(tmp, ec);  // the old folder
  sync_folder(parent);
  return true;
}

int remove_stale_temporaries(const std::string& folder) { return remove_stale(fs::path(folder), ""); }

}  // namespace maskscope
