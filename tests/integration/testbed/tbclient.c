/* The testbed's fakes, started cheaply: a host's bin/TOOL is a hard link to
 * this program (compiled by `testbed.sh up` for its run directory, which it
 * knows as TB_RUN, TB_RUN_REAL, TB_LIB and TB_SOCKET), so a call of TOOL ARGS... starts
 * one process, not a shell and then this. The older form
 *
 *   tbclient SOCKET LIB TOOL ARGS...
 *
 * (from a #!/bin/sh wrapper) still works. Either way it hands its argv,
 * environment, working directory, mount namespace and standard descriptors to
 * the testbed's fake server (tbserver.py, one per run directory, listening on
 * the abstract unix socket SOCKET). The server forks a worker that enters this
 * process's mount namespace, takes over its descriptors and runs the fake (or
 * runs a read-only fake itself); this process waits and exits as the fake did
 * (its exit code, or the same signal). Signals sent to this process are passed
 * on to the worker; if this process dies, the server kills the worker. Where no
 * server answers, the fake runs here, in Python (LIB/tbfake.py), as it did before.
 *
 * The host (TB_HOST for the fakes) is TB_HOST from the environment when set,
 * else the directory of the link the program was started by
 * (RUN/hosts/NAME/bin/TOOL), else RUN/hosts/NAME for the host name of this UTS
 * namespace (a tool bind-mounted over /usr/sbin/TOOL).
 *
 * Part of the testbed (docs/testbed.md). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <unistd.h>

extern char **environ;

static volatile pid_t worker;

static void forward(int sig) {
  if (worker > 0) kill(worker, sig);
}

static int fallback(const char *lib, const char *tool, int nargs, char **args) {
  /* python3 [-S] -c CODE TOOL ARGS... */
  static char code[4096];
  snprintf(code, sizeof code,
           "import sys; sys.path.insert(0, \"%s\"); import tbfake; sys.exit(tbfake.main())", lib);
  char **av = calloc((size_t)nargs + 6, sizeof *av);
  if (!av) return 1;
  int n = 0;
  av[n++] = "python3";
  if (strcmp(tool, "kubeadm") != 0) av[n++] = "-S";
  av[n++] = "-c";
  av[n++] = code;
  av[n++] = (char *)tool;
  for (int i = 0; i < nargs; i++) av[n++] = args[i];
  av[n] = NULL;
  execv("/usr/bin/python3", av);
  perror("tbclient: /usr/bin/python3");
  return 127;
}

#ifdef TB_RUN
#ifndef TB_RUN_REAL
#define TB_RUN_REAL TB_RUN
#endif
static int is_dir(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The host this call is for (see the top), or NULL. */
static char *find_host(void) {
  static char host[4096];
  const char *env = getenv("TB_HOST");
  if (env && *env) return NULL; /* already in the environment */
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    exe[n] = 0;
    /* The link's path as the kernel resolved it: under the run directory's real path. */
    const char *prefix = TB_RUN_REAL "/hosts/";
    const size_t pl = strlen(prefix);
    char *slash = strrchr(exe, '/');
    if (strncmp(exe, prefix, pl) == 0 && slash && slash - exe > 4 && strncmp(slash - 4, "/bin", 4) == 0) {
      slash[-4] = 0; /* NAME after the prefix */
      if (exe[pl] && !strchr(exe + pl, '/')) {
        snprintf(host, sizeof host, "%s/hosts/%s", TB_RUN, exe + pl);
        if (is_dir(host)) return host;
      }
    }
  }
  struct utsname u;
  if (uname(&u) == 0 && u.nodename[0] && !strchr(u.nodename, '/')) {
    snprintf(host, sizeof host, "%s/hosts/%s", TB_RUN, u.nodename);
    if (is_dir(host)) return host;
  }
  return NULL;
}
#endif

static int append(char **buf, size_t *len, size_t *cap, const char *s) {
  size_t n = strlen(s) + 1;
  if (*len + n > *cap) {
    size_t c = (*cap ? *cap * 2 : 8192);
    while (c < *len + n) c *= 2;
    char *b = realloc(*buf, c);
    if (!b) return -1;
    *buf = b;
    *cap = c;
  }
  memcpy(*buf + *len, s, n);
  *len += n;
  return 0;
}

int main(int argc, char **argv) {
  const char *sock, *lib, *tool;
  char **args;
  int nargs;
  const char *base = strrchr(argv[0], '/');
  base = base ? base + 1 : argv[0];
  if (strcmp(base, "tbclient") == 0) {
    if (argc < 4) {
      fprintf(stderr, "usage: tbclient SOCKET LIB TOOL ARGS... (or run as a hard link named TOOL)\n");
      return 2;
    }
    sock = argv[1];
    lib = argv[2];
    tool = argv[3];
    args = argv + 4;
    nargs = argc - 4;
  } else {
#ifdef TB_RUN
    sock = TB_SOCKET;
    lib = TB_LIB;
    tool = base;
    args = argv + 1;
    nargs = argc - 1;
    const char *host = find_host();
    if (host) {
      setenv("TB_HOST", host, 1);
    } else if (!getenv("TB_HOST") || !*getenv("TB_HOST")) {
      fprintf(stderr, "%s: the testbed cannot tell which host this is (no TB_HOST, not under %s/hosts)\n",
              tool, TB_RUN);
      return 127;
    }
#else
    fprintf(stderr, "tbclient: compiled without a run directory; run as tbclient SOCKET LIB TOOL ARGS...\n");
    return 2;
#endif
  }
  int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  struct sockaddr_un addr;
  memset(&addr, 0, sizeof addr);
  addr.sun_family = AF_UNIX;
  size_t nl = strlen(sock);
  if (nl + 1 > sizeof addr.sun_path) return fallback(lib, tool, nargs, args);
  memcpy(addr.sun_path + 1, sock, nl); /* abstract: a leading NUL */
  if (s < 0 || connect(s, (struct sockaddr *)&addr, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + nl)) != 0) {
    if (s >= 0) close(s);
    return fallback(lib, tool, nargs, args);
  }

  /* The request: "NARGS\0NENV\0FDMASK\0" ARGS... ENV..., NUL-separated; the
   * descriptors: the mount namespace, the working directory, then those of 0, 1, 2 that are open. */
  char *buf = NULL;
  size_t len = 0, cap = 0;
  int nenv = 0;
  while (environ[nenv]) nenv++;
  int fds[5], nfd = 0, mask = 0;
  fds[nfd++] = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
  fds[nfd++] = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fds[0] < 0 || fds[1] < 0) {
    close(s);
    return fallback(lib, tool, nargs, args);
  }
  for (int fd = 0; fd < 3; fd++)
    if (fcntl(fd, F_GETFD) != -1) {
      fds[nfd++] = fd;
      mask |= 1 << fd;
    }
  char num[32];
  snprintf(num, sizeof num, "%d", nargs + 1);
  int bad = append(&buf, &len, &cap, num);
  snprintf(num, sizeof num, "%d", nenv);
  bad |= append(&buf, &len, &cap, num);
  snprintf(num, sizeof num, "%d", mask);
  bad |= append(&buf, &len, &cap, num);
  bad |= append(&buf, &len, &cap, tool);
  for (int i = 0; i < nargs; i++) bad |= append(&buf, &len, &cap, args[i]);
  for (int i = 0; i < nenv; i++) bad |= append(&buf, &len, &cap, environ[i]);
  if (bad) {
    close(s);
    return fallback(lib, tool, nargs, args);
  }
  struct iovec iov = {buf, len};
  union {
    char buf[CMSG_SPACE(sizeof fds)];
    struct cmsghdr align;
  } ctl;
  memset(&ctl, 0, sizeof ctl);
  struct msghdr msg = {0};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = ctl.buf;
  msg.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfd);
  struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfd);
  memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)nfd);
  if (sendmsg(s, &msg, MSG_NOSIGNAL) < 0) {
    close(s);
    return fallback(lib, tool, nargs, args);
  }
  close(fds[0]);
  close(fds[1]);
  free(buf);

  /* Two answers: "pid N" when the worker starts, "exit N" or "signal N" when it ends. */
  int sigs[] = {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM};
  char ans[64];
  for (;;) {
    ssize_t n = recv(s, ans, sizeof ans - 1, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      fprintf(stderr, "tbclient: the testbed's fake server went away\n");
      return 1;
    }
    ans[n] = 0;
    int v;
    if (sscanf(ans, "pid %d", &v) == 1) {
      worker = v;
      struct sigaction sa;
      memset(&sa, 0, sizeof sa);
      sa.sa_handler = forward;
      for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) sigaction(sigs[i], &sa, NULL);
      signal(SIGPIPE, SIG_IGN);
    } else if (sscanf(ans, "exit %d", &v) == 1) {
      return v;
    } else if (sscanf(ans, "signal %d", &v) == 1) {
      signal(v, SIG_DFL);
      sigset_t set;
      sigemptyset(&set);
      sigaddset(&set, v);
      sigprocmask(SIG_UNBLOCK, &set, NULL);
      raise(v);
      return 128 + v;
    }
  }
}
