// The signals that stop a run with a checkpoint (exit 75): what a batch system, mpirun or a user sends.
#pragma once

namespace percussion::cli {

// Installs the handlers (SIGTERM, SIGINT, SIGUSR1, SIGUSR2); they only record the signal, so a second one
// changes nothing and a checkpoint being written is never cut short. Call once, before the run's set-up.
void install_stop_signals();

// The last stop signal received by this rank, or 0.
int stop_signal();

}  // namespace percussion::cli
