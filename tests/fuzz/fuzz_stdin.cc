// Fuzz the stdin readers (`job validate -`, `check hosts --hosts-file -`,
// `cluster add --password-stdin` / `--token-stdin`, SSH passwords read by
// remote::read_secret_line): the input is written into a pipe by a
// second thread in chunks whose sizes come from the input, as a slow producer
// would, and read back with util::read_fd or util::read_line under a small
// limit. Checks the contract, not just the absence of a crash:
//   read_fd:   ok exactly when the input fits the limit, and then the content
//              is the input byte for byte; otherwise no content is kept;
//   read_line: ok exactly when the first line (without '\n' and one final
//              '\r') fits the limit; the content never holds '\n' and is the
//              input's first line; nothing after the newline is consumed.
// Then the bytes read by `job validate -` go through the job reader, so the
// path from a pipe to findings is covered end to end.
// Layout of an input: byte 0 mode (even: read_fd, odd: read_line), byte 1 the
// limit (1..256 bytes, 0 means the real default), byte 2 the chunk size, rest
// the producer's bytes.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <thread>

#include "diag/report.h"
#include "job/validate.h"
#include "util/stdin.h"

namespace {

void write_all(int fd, const std::string& data, size_t chunk) {
  size_t off = 0;
  while (off < data.size()) {
    size_t n = std::min(chunk, data.size() - off);
    ssize_t w = ::write(fd, data.data() + off, n);
    if (w < 0) return;  // the reader stopped (EPIPE): a producer that is cut off
    off += static_cast<size_t>(w);
  }
}

std::string drain(int fd) {
  std::string rest;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) rest.append(buf, static_cast<size_t>(n));
  return rest;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // A reader that stops early closes nothing, but the writer must never die of SIGPIPE.
  signal(SIGPIPE, SIG_IGN);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 3 || size > 70000) return 0;
  const bool line_mode = data[0] & 1;
  const size_t limit =
      data[1] == 0 ? (line_mode ? pai::util::kMaxSecretBytes : pai::util::kMaxStdinBytes) : data[1];
  const size_t chunk = 1 + data[2];
  const std::string input(reinterpret_cast<const char*>(data) + 3, size - 3);

  int fds[2];
  if (::pipe(fds) != 0) return 0;
  std::thread producer([&] {
    write_all(fds[1], input, chunk);
    ::close(fds[1]);
  });
  pai::util::Result<std::string> r = line_mode ? pai::util::read_line(fds[0], limit, "stdin")
                                               : pai::util::read_fd(fds[0], limit, "stdin");
  // Whatever the reader left in the pipe: read_line must have stopped right after the newline.
  std::string rest = drain(fds[0]);
  producer.join();
  ::close(fds[0]);

  if (!line_mode) {
    const bool fits = input.size() <= limit;
    if (r.ok() != fits) std::abort();
    if (r.ok() && *r != input) std::abort();
    if (!r.ok() && r.error().message.empty()) std::abort();
    if (r.ok()) {
      // `job validate -`: the same bytes through the job reader and the rules.
      pai::job::JobFile f = pai::job::JobFile::parse(*r, "<stdin>");
      pai::diag::List out;
      pai::job::validate(f, out);
    }
    return 0;
  }

  const size_t nl = input.find('\n');
  std::string line = input.substr(0, nl);
  const std::string after = nl == std::string::npos ? std::string() : input.substr(nl + 1);
  if (!line.empty() && line.back() == '\r') line.pop_back();
  // read_line counts the bytes before the newline, a final '\r' included.
  const size_t raw = nl == std::string::npos ? input.size() : nl;
  const bool fits = raw <= limit;
  if (r.ok() != fits) std::abort();
  if (r.ok()) {
    if (*r != line) std::abort();
    if (r->find('\n') != std::string::npos) std::abort();
    if (rest != after) std::abort();  // nothing after the line was consumed
  } else if (r.error().message.empty()) {
    std::abort();
  }
  return 0;
}
