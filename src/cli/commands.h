#pragma once

namespace CLI {
class App;
}

namespace stepscope::cli {

void register_analyze(CLI::App& app);
void register_diff(CLI::App& app);
// The exit status chosen by the subcommand that ran.
int exit_code();
void set_exit_code(int code);

}  // namespace stepscope::cli
