// Looks up live processes by what their command line mentions, to prove the test servers are gone.
// Reads /proc only; it never signals or otherwise touches the processes it finds.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace shardscaler::testenv {

// Pids of live (not zombie) processes, other than the caller, whose command line contains
// `needle` (e.g. a control plane's work directory, which each of its servers is given).
std::vector<pid_t> processesMentioning(const std::string& needle);

// True while `pid` exists and is not a zombie.
bool processAlive(pid_t pid);

}  // namespace shardscaler::testenv
