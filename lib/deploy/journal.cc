#include "deploy/journal.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

#include "util/fs.h"
#include "util/json.h"
#include "util/time.h"

namespace pai::deploy {

namespace {
std::string parent_dir(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}
}  // namespace

util::Result<void> Journal::open(const std::string& path) {
  if (path.empty()) return {};
  path_ = path;
  std::string dir = parent_dir(path);
  if (!util::is_directory(dir)) {
    auto made = util::make_directories(dir, 0700);
    if (!made.ok()) return util::Error{error_ = made.error().message, ""};
  }
  // O_NONBLOCK: a FIFO in the journal's place fails at once (ENXIO without a
  // reader) instead of blocking; anything but a regular file is refused.
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NONBLOCK, 0600);
  if (fd_ < 0) {
    int err = errno;
    return util::Error{error_ = "cannot open " + path + ": " +
                                (err == ENXIO ? std::string("it is a FIFO (named pipe)")
                                              : std::string(std::strerror(err))),
                       ""};
  }
  struct stat kind {};
  if (::fstat(fd_, &kind) == 0 &&
      (S_ISDIR(kind.st_mode) || S_ISFIFO(kind.st_mode) || S_ISSOCK(kind.st_mode))) {
    ::close(fd_);
    fd_ = -1;
    return util::Error{
        error_ = "cannot open " + path + ": " +
                 (S_ISDIR(kind.st_mode) ? "it is a directory" : "it is a FIFO or a socket"),
        ""};
  }
  ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) & ~O_NONBLOCK);
  // A journal torn by a kill -9 ends without a newline: start on a line of our own.
  struct stat st {};
  if (::fstat(fd_, &st) == 0 && st.st_size > 0) {
    int rfd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    char last = '\n';
    if (rfd >= 0) {
      if (::pread(rfd, &last, 1, st.st_size - 1) != 1) last = '\n';
      ::close(rfd);
    }
    if (last != '\n' && ::write(fd_, "\n", 1) != 1) {
      error_ = "cannot write " + path + ": " + std::strerror(errno);
      return util::Error{error_, ""};
    }
  }
  return {};
}

std::string Journal::error() const {
  std::lock_guard lock(mu_);
  return error_;
}

util::Result<void> Journal::reserve(size_t bytes) {
  if (fd_ < 0) return {};
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) return {};
  int e = ::fallocate(fd_, FALLOC_FL_KEEP_SIZE, st.st_size, static_cast<off_t>(bytes));
  if (e == 0) return {};
  e = errno;
  if (e == ENOSPC || e == EDQUOT) {
    std::lock_guard lock(mu_);
    error_ = "cannot write " + path_ + ": " + std::strerror(e);
    return util::Error{error_, ""};
  }
  return {};  // EOPNOTSUPP and the like: the appends say it, if anything
}

Journal::~Journal() {
  if (fd_ >= 0) ::close(fd_);
}

util::Result<void> Journal::append(nlohmann::json record) {
  if (fd_ < 0) return {};
  nlohmann::json line = nlohmann::json::object();
  line["time"] = util::now_rfc3339_ms();
  for (auto& [k, v] : record.items()) line[k] = v;
  std::string text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  std::lock_guard lock(mu_);
  if (!error_.empty()) return util::Error{error_, ""};
  // One write(2) with O_APPEND: concurrent writers never interleave inside a line.
  ssize_t n = ::write(fd_, text.data(), text.size());
  if (n != static_cast<ssize_t>(text.size())) {
    // A short write leaves a torn line, which readers skip.
    int e = n < 0 ? errno : ENOSPC;
    error_ = "cannot write " + path_ + ": " + std::strerror(e);
  } else if (::fsync(fd_) != 0 && errno != EINVAL && errno != EROFS) {
    error_ = "cannot write " + path_ + " to the disk: " + std::strerror(errno);
  }
  if (!error_.empty()) return util::Error{error_, ""};
  return {};
}

util::Result<void> check_journal_writable(const std::string& path) {
  Journal j;
  if (auto o = j.open(path); !o) return o;
  // Some dozens of records of a run.
  return j.reserve(64u << 10);
}

void journal_interruption(const std::string& path, const std::string& signal,
                          const std::vector<std::pair<std::string, std::string>>& running) {
  if (path.empty() || !util::is_regular_file(path)) return;
  Journal j;
  if (!j.open(path).ok()) return;
  nlohmann::json steps = nlohmann::json::array();
  for (const auto& [host, phase] : running) steps.push_back({{"host", host}, {"phase", phase}});
  // Best effort, from a signal's exit path: a run that cannot journal already stopped.
  (void)j.append({{"event", "interrupted"},
                  {"signal", signal},
                  {"pid", static_cast<int64_t>(::getpid())},
                  {"steps", steps}});
}

util::Result<std::vector<nlohmann::json>> read_journal(const std::string& path, size_t max_bytes) {
  std::vector<nlohmann::json> out;
  if (!util::path_entry_exists(path)) return out;  // no install ran yet
  auto tail = util::read_file_tail(path, max_bytes);
  if (!tail.ok()) return util::Error{path + " " + tail.error().message, ""};
  std::string_view text = tail->text;
  // A tail starts inside a line: drop that part, it is no record.
  if (tail->skipped > 0) {
    size_t nl = text.find('\n');
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
  }
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (line.empty()) continue;
    auto j = util::parse_json_or_discarded(line);
    if (j.is_discarded() || !j.is_object() || !j.contains("event") || !j["event"].is_string())
      continue;
    out.push_back(std::move(j));
  }
  return out;
}

std::vector<nlohmann::json> interrupted_steps(const std::vector<nlohmann::json>& records) {
  // A step is (host, phase), whichever run it was in: one that started and
  // never ended stays interrupted until a later run completes it (an "end"
  // that changed it, or an "up-to-date" record: observed done), and is then
  // never reported again. A run's own start and end close nothing of another
  // run but through that.
  using Key = std::pair<std::string, std::string>;
  std::map<Key, nlohmann::json> open;
  std::vector<Key> order;
  auto str = [](const nlohmann::json& j, const char* k) {
    return j.contains(k) && j[k].is_string() ? j[k].get<std::string>() : std::string();
  };
  for (const auto& r : records) {
    std::string ev = str(r, "event");
    std::string run = str(r, "run");
    Key key{str(r, "host"), str(r, "phase")};
    if (ev == "start") {
      // A later start of an open step is its retry: the step stays open under
      // the earlier run until it completes.
      if (!open.count(key)) {
        order.push_back(key);
        nlohmann::json j = {
            {"run", run}, {"host", key.first}, {"phase", key.second}, {"time", str(r, "time")}};
        open[key] = std::move(j);
      }
    } else if (ev == "end") {
      if (str(r, "result") != "failed") {
        open.erase(key);
      } else if (auto it = open.find(key); it != open.end() && it->second.value("run", "") == run) {
        // This run's own step failed: that is a failure, not an interruption.
        open.erase(it);
      }
    } else if (ev == "up-to-date") {
      open.erase(key);
    }
  }
  std::vector<nlohmann::json> out;
  for (const auto& k : order)
    if (auto it = open.find(k); it != open.end()) {
      out.push_back(it->second);
      open.erase(it);
    }
  return out;
}

LocalLock::~LocalLock() {
  release();
}

util::Result<void> LocalLock::acquire(const std::string& path, const std::string& what) {
  std::string dir = parent_dir(path);
  if (!util::is_directory(dir)) {
    auto made = util::make_directories(dir, 0700);
    if (!made.ok()) return util::Error{made.error().message, ""};
  }
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return util::Error{"cannot open " + path + ": " + std::strerror(errno), ""};
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int e = errno;
    std::string holder;
    char buf[512];
    ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
    if (n > 0) holder.assign(buf, static_cast<size_t>(n));
    ::close(fd);
    while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.pop_back();
    if (e == EWOULDBLOCK)
      return util::Error{"another paictl run on this cluster is running (" +
                             (holder.empty() ? std::string("holder unknown") : holder) + "; lock " +
                             path + ")",
                         "one run changes a cluster at a time: wait for it to end (a run that "
                         "was killed lets go of the lock at once)"};
    return util::Error{"cannot lock " + path + ": " + std::strerror(e), ""};
  }
  char host[256] = {0};
  ::gethostname(host, sizeof host - 1);
  std::string content = "paictl " + what + ", pid " + std::to_string(::getpid()) + " on host " +
                        host + " since " + util::now_rfc3339_ms() + "\n";
  if (::ftruncate(fd, 0) != 0 ||
      ::pwrite(fd, content.data(), content.size(), 0) != static_cast<ssize_t>(content.size())) {
    // The lock holds even when its note cannot be written.
  }
  fd_ = fd;
  return {};
}

void LocalLock::release() {
  if (fd_ < 0) return;
  if (::ftruncate(fd_, 0) != 0) {
  }
  ::flock(fd_, LOCK_UN);
  ::close(fd_);
  fd_ = -1;
}

}  // namespace pai::deploy
