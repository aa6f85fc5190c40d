// Runs one command and writes its wall time, CPU time and peak RSS exactly:
// what `/usr/bin/time -f "%e %U %S %M"` reports, without GNU time's cutting
// of seconds to two decimals (0.0069 s prints 0.00, so a table of many short
// processes summed from its output comes out up to 0.01 s per row and field
// too fast). CPU times come from wait4 in microseconds.
//
// Written against libc only, and run as its own small process, because the
// peak RSS a parent reads for its child starts at the parent's own RSS at
// fork (Linux carries the high-water mark across exec): measured from a
// Python parent, a 7.7 MB process reads as 13.8 MB.
//
// usage: process_usage OUTFILE COMMAND [ARG...]
// OUTFILE gets one line "wall_s user_s sys_s maxrss_kb". The command's output
// passes through; the exit status is the command's (a signal N: 128 + N).
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>

namespace {

double seconds(const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; }

double now() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: process_usage OUTFILE COMMAND [ARG...]\n");
    return 2;
  }
  const double start = now();
  const pid_t pid = fork();
  if (pid < 0) {
    std::fprintf(stderr, "process_usage: fork: %s\n", std::strerror(errno));
    return 2;
  }
  if (pid == 0) {
    execvp(argv[2], argv + 2);
    std::fprintf(stderr, "process_usage: cannot run %s: %s\n", argv[2], std::strerror(errno));
    _exit(127);
  }
  int status = 0;
  rusage usage{};
  while (wait4(pid, &status, 0, &usage) < 0) {
    if (errno != EINTR) {
      std::fprintf(stderr, "process_usage: wait4: %s\n", std::strerror(errno));
      return 2;
    }
  }
  const double wall = now() - start;
  std::FILE* out = std::fopen(argv[1], "w");
  if (!out) {
    std::fprintf(stderr, "process_usage: cannot write %s: %s\n", argv[1], std::strerror(errno));
    return 2;
  }
  std::fprintf(out, "%.6f %.6f %.6f %ld\n", wall, seconds(usage.ru_utime), seconds(usage.ru_stime), usage.ru_maxrss);
  std::fclose(out);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}
