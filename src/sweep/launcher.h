// Launcher templates: how one job of N replicas is started (mpirun, srun, an emulated-hosts
// mpirun...). A template is split into argv like a shell would split words (quotes group, no
// expansion), `{n}` is replaced by the replica count, and the program and its arguments are
// appended. Nothing is ever handed to a shell.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"

namespace stepscope::sweep {

// The default: OpenMPI on this one host, as scripts/mpirun-local.sh runs it.
inline constexpr const char* kDefaultLauncher =
    "mpirun -np {n} --oversubscribe --bind-to none --mca mpi_yield_when_idle 1 "
    "--mca btl self,vader";

// Environment every launched job gets on top of the caller's (OpenMPI refuses root without it;
// other launchers ignore it).
std::vector<std::string> LauncherEnvironment();

// Splits `text` into words: blanks separate, '...' and "..." group (no escapes inside '...',
// backslash escapes inside "..." and outside quotes). Errors name the unterminated quote.
Result<std::vector<std::string>> SplitWords(const std::string& text);

struct Launcher {
  std::vector<std::string> words;  // the template, split; holds {n} somewhere (or not at all)
  // Processes per host for {nproc_per_node} and {nnodes}; 0: every process on one host.
  int per_node = 0;

  // Parses a template; it must not be empty.
  static Result<Launcher> Parse(const std::string& text);
  // The argv that starts `program args...` on `replicas` replicas: {n} is the replica count,
  // {nproc_per_node} min(replicas, per_node) and {nnodes} the hosts that takes.
  std::vector<std::string> Argv(int replicas, const std::string& program,
                                const std::vector<std::string>& args) const;
};

// Joins argv into one line a user can paste into a shell (single-quoting words that need it).
std::string QuoteCommand(const std::vector<std::string>& argv);

}  // namespace stepscope::sweep
