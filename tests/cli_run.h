// Runs the built `stepscope` binary the way a user's shell does and captures
// its exit status, stdout and stderr lines: what CLI tests of every layer
// assert on.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "test_paths.h"
#include "trace/trace_fixtures.h"

namespace stepscope::testing {

struct CliRun {
  int exit_code = -1;
  std::string out;
  std::vector<std::string> err_lines;
};

// Single-quotes `s` for /bin/sh.
inline std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Runs the CLI with `args`; stdout and stderr go through files in `dir`.
// `shell_prefix` runs first in the same shell (e.g. "ulimit -v N;").
inline CliRun run_cli(const TempDir& dir, const std::vector<std::string>& args, const std::string& shell_prefix = "") {
  std::string cmd = shell_prefix + "exec " + shell_quote(cli_path());
  for (const auto& a : args) cmd.append(" ").append(shell_quote(a));
  std::string out = dir.file("cli.out"), err = dir.file("cli.err");
  cmd.append(" >").append(shell_quote(out)).append(" 2>").append(shell_quote(err));
  int status = std::system(cmd.c_str());
  CliRun r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = read_file(out);
  std::istringstream in(read_file(err));
  for (std::string line; std::getline(in, line);) r.err_lines.push_back(line);
  return r;
}

// stderr lines joined back, for a failed expectation's message.
inline std::string joined(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += l + "\n";
  return s;
}

// Runs `cmd` through /bin/sh and returns its stdout; `exit_code` gets the
// exit status (128 when it did not exit normally).
inline std::string run_shell(const std::string& cmd, int& exit_code) {
  std::string out;
  exit_code = 128;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[1 << 16];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  int status = pclose(p);
  exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
  return out;
}

}  // namespace stepscope::testing
