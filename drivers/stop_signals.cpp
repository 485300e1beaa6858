// Stop signals: a flag the time loop reads at every step (run.cpp decides collectively and checkpoints).
#include "stop_signals.hpp"

#include <csignal>
#include <initializer_list>
#include <cstdlib>
#include <unistd.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif

namespace percussion::cli {
namespace {

volatile std::sig_atomic_t g_signal = 0;
extern "C" void on_stop_signal(int s) { g_signal = s; }

// Open MPI's mpirun (4.x) never forwards SIGTERM or SIGINT: it sends the ranks SIGCONT, SIGTERM a second later and
// SIGKILL another second later, and on a second signal within 5 s it exits at once, leaving the ranks unsignalled.
// A rank whose launcher is gone gets SIGTERM from the kernel instead, and checkpoints. Only ranks that a launcher
// daemon started: a run under nohup must outlive the shell that started it.
void stop_when_launcher_exits() {
#if defined(__linux__)
  if (std::getenv("OMPI_MCA_orte_local_daemon_uri") == nullptr && std::getenv("PRTE_LAUNCHED") == nullptr) return;
  const pid_t launcher = getppid();
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() != launcher) g_signal = SIGTERM;  // it exited before the request took effect
#endif
}

}  // namespace

void install_stop_signals() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;  // a checkpoint's writes resume after the handler instead of failing with EINTR
  for (int s : {SIGTERM, SIGINT, SIGUSR1, SIGUSR2}) sigaction(s, &sa, nullptr);
  // A rank whose stdout reader (mpirun) is gone loses its log lines, not its checkpoint.
  std::signal(SIGPIPE, SIG_IGN);
  stop_when_launcher_exits();
}

int stop_signal() { return g_signal; }

}  // namespace percussion::cli
