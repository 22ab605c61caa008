// The `paictl` executable. It answers --version by itself and otherwise loads
// the command-line library (libpaictl-cli, which links libpai, libcurl, libssh
// and their TLS stacks) and runs it. Loading those libraries and their
// initialisers costs ~10 ms, ten times a bare process start, so nothing heavy
// runs before a command needs it. Only libc is used here.

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/version.h"

#ifndef PAI_CLI_LIBRARY
#define PAI_CLI_LIBRARY "libpaictl-cli.so"
#endif
#ifndef PAI_LIBDIR_FROM_BINDIR
#define PAI_LIBDIR_FROM_BINDIR "../lib"
#endif

namespace {

// Directory of the running executable, or "" if unknown.
void exe_dir(char* out, size_t size) {
  out[0] = '\0';
  char path[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) return;
  path[n] = '\0';
  char* slash = strrchr(path, '/');
  if (!slash) return;
  *slash = '\0';
  snprintf(out, size, "%s", path);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && strcmp(argv[1], "--version") == 0) {
    printf("paictl %s\n", pai::kVersion);
    return 0;
  }
  char dir[PATH_MAX];
  exe_dir(dir, sizeof dir);
  const char* env = getenv("PAICTL_CLI_LIBRARY");
  char candidates[3][PATH_MAX + 64];
  int count = 0;
  if (env && *env) snprintf(candidates[count++], sizeof candidates[0], "%s", env);
  if (dir[0]) {
    snprintf(candidates[count++], sizeof candidates[0], "%s/%s", dir, PAI_CLI_LIBRARY);
    snprintf(candidates[count++], sizeof candidates[0], "%s/%s/%s", dir, PAI_LIBDIR_FROM_BINDIR,
             PAI_CLI_LIBRARY);
  }
  void* handle = nullptr;
  const char* last_error = "no candidate path";
  for (int i = 0; i < count && !handle; ++i) {
    if (access(candidates[i], R_OK) != 0) continue;
    // Lazy binding: a command calls few of the functions these libraries
    // import, so each is resolved on its first call instead of all of them
    // here (about a quarter of the loading's cost; the libraries are built
    // together, so nothing is missing).
    handle = dlopen(candidates[i], RTLD_LAZY | RTLD_LOCAL);
    if (!handle) last_error = dlerror();
  }
  if (!handle) {
    fprintf(stderr, "paictl: error: cannot load %s next to the paictl binary: %s\n",
            PAI_CLI_LIBRARY, last_error);
    fprintf(stderr, "The installation is incomplete; reinstall paictl (cmake --install).\n");
    return 2;
  }
  using Entry = int (*)(int, char**);
  Entry entry = reinterpret_cast<Entry>(dlsym(handle, "paictl_main"));
  if (!entry) {
    fprintf(stderr, "paictl: error: %s has no paictl_main: %s\n", PAI_CLI_LIBRARY, dlerror());
    return 2;
  }
  int rc = entry(argc, argv);
  fflush(stdout);
  // Skip library destructors: the command is done and the OS reclaims everything.
  _exit(rc);
}
