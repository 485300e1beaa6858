#!/usr/bin/env bash
# Percussion's environment, in one place. Other scripts source it:
#   source scripts/setup.sh
# It installs missing Debian packages, lets Open MPI run as root (containers, CI) and defines
#   percussion_build [BUILD_DIR [BUILD_TYPE [extra cmake args...]]]   configure + build
#   percussion_mpirun ARGS...                                         mpirun that may oversubscribe cores
#   percussion_python                                                 prints a python that has h5py + matplotlib
# Run directly (`bash scripts/setup.sh`) to install and report what it found.
# Environment knobs: PERCUSSION_SKIP_INSTALL=1 (never touch packages, e.g. on a cluster with modules),
# PERCUSSION_PYTHON=/path/to/python (use this interpreter).

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  set -euo pipefail  # run as a program; when sourced, the caller's options stay in charge
fi

PERCUSSION_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PERCUSSION_ROOT

PERCUSSION_DEBIAN_PACKAGES=(
  build-essential cmake ninja-build pkg-config
  petsc-dev libmetis-dev libhdf5-openmpi-dev libeigen3-dev libopenmpi-dev openmpi-bin
  nlohmann-json3-dev libgtest-dev
  libvalijson-dev
  python3-h5py python3-matplotlib python3-jsonschema
  libptscotch-dev libglpk-dev libgmp-dev time
  libgmsh-dev gmsh   # geometry/mesh generates boxes, disks and balls; the tests write .msh files with it
  munge slurmd slurmctld slurm-client   # tests/cli/slurm.sh starts its own single-node SLURM
)

# Print the packages of PERCUSSION_DEBIAN_PACKAGES that are not installed, one per line.
percussion_missing_packages() {
  local installed line p
  # One dpkg-query for all: unknown packages print nothing on stdout (and complain on stderr).
  installed="$(dpkg-query -W -f='${Package} ${Status}\n' "${PERCUSSION_DEBIAN_PACKAGES[@]}" 2>/dev/null || true)"
  for p in "${PERCUSSION_DEBIAN_PACKAGES[@]}"; do
    line="$(awk -v p="$p" '$1 == p' <<<"$installed")"
    [[ "$line" == *" install ok installed" ]] || printf '%s\n' "$p"
  done
}

percussion_install_packages() {
  if [[ "${PERCUSSION_SKIP_INSTALL:-0}" == 1 ]]; then
    return 0
  fi
  if ! command -v dpkg-query >/dev/null 2>&1; then
    echo "setup: not a Debian system; install by hand: ${PERCUSSION_DEBIAN_PACKAGES[*]}" >&2
    return 0
  fi
  local missing=()
  mapfile -t missing < <(percussion_missing_packages)
  if (( ${#missing[@]} == 0 )); then
    return 0
  fi
  local sudo=()
  if [[ "$(id -u)" -ne 0 ]]; then
    if ! command -v sudo >/dev/null 2>&1; then
      echo "setup: missing packages (${missing[*]}) and neither root nor sudo available" >&2
      return 1
    fi
    sudo=(sudo)
  fi
  echo "setup: installing missing packages: ${missing[*]}" >&2
  # Wait for a dpkg lock held by another apt run instead of failing at once.
  "${sudo[@]}" apt-get -o DPkg::Lock::Timeout=600 update
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get -o DPkg::Lock::Timeout=600 install -y "${missing[@]}"
}

# Open MPI refuses to start as root without these (containers, CI runners).
export OMPI_ALLOW_RUN_AS_ROOT=1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# percussion_build [BUILD_DIR [BUILD_TYPE [cmake args...]]]
# A relative BUILD_DIR is taken relative to the repository root, not the current directory.
percussion_build() {
  local dir="${1:-build}" type="${2:-Release}"
  if [[ "$dir" != /* ]]; then
    dir="$PERCUSSION_ROOT/$dir"
  fi
  local generator=()
  # Ninja compiles the tests' objects while the library's last batches build; Make waits for the library to link.
  # A build directory keeps the generator it was configured with.
  if [[ ! -f "$dir/CMakeCache.txt" ]] && command -v ninja >/dev/null 2>&1; then
    generator=(-G Ninja)
  fi
  cmake -S "$PERCUSSION_ROOT" -B "$dir" "${generator[@]}" -DCMAKE_BUILD_TYPE="$type" "${@:3}"
  cmake --build "$dir" -j"$(nproc)"
}

# percussion_bench_start NAME BUILD_DIR: for the bench scripts. Sets `work` to a new /tmp/percussion-NAME-bench.*
# directory (removed on exit unless KEEP=1), prints the machine's load, builds Release in BUILD_DIR (log in $work)
# unless PERCUSSION_BENCH_NO_BUILD=1, and checks that BUILD_DIR/percussion runs.
percussion_bench_start() {
  local name="$1" dir="$2"
  work="$(mktemp -d "/tmp/percussion-$name-bench.XXXXXX")"
  if [[ "${KEEP:-0}" != 1 ]]; then
    trap 'rm -rf "$work"' EXIT
  fi
  echo "machine: $(nproc) cores, /proc/loadavg before the runs: $(cat /proc/loadavg)"
  if [[ "${PERCUSSION_BENCH_NO_BUILD:-0}" != 1 ]]; then
    echo "bench: building Release in $dir/ (log: $work/build.log)" >&2
    if ! percussion_build "$dir" Release >"$work/build.log" 2>&1; then
      echo "bench: the build failed; last lines of $work/build.log:" >&2
      tail -n 40 "$work/build.log" >&2
      trap - EXIT  # keep the log
      exit 1
    fi
  fi
  if [[ ! -x "$dir/percussion" ]]; then
    echo "bench: $dir/percussion not found or not executable (set BUILD_DIR, or drop PERCUSSION_BENCH_NO_BUILD)" >&2
    exit 1
  fi
}

# mpirun that accepts more ranks than cores (laptops, CI); other arguments pass through.
percussion_mpirun() {
  mpirun --oversubscribe "$@"
}

# Print the first interpreter that imports h5py and matplotlib. The system python comes first because
# a pyenv/virtualenv python3 earlier on PATH usually lacks the Debian python3-h5py/-matplotlib modules.
percussion_python() {
  local candidates=() py
  if [[ -n "${PERCUSSION_PYTHON:-}" ]]; then
    candidates+=("$PERCUSSION_PYTHON")
  fi
  candidates+=(/usr/bin/python3)
  if command -v python3 >/dev/null 2>&1; then
    candidates+=("$(command -v python3)")
  fi
  for py in "${candidates[@]}"; do
    if [[ -x "$py" ]] && "$py" -c 'import h5py, matplotlib' >/dev/null 2>&1; then
      printf '%s\n' "$py"
      return 0
    fi
  done
  echo "setup: no python3 with h5py and matplotlib (tried: ${candidates[*]});" \
       "install python3-h5py python3-matplotlib or set PERCUSSION_PYTHON" >&2
  return 1
}

percussion_install_packages

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  echo "repository: $PERCUSSION_ROOT"
  if command -v dpkg-query >/dev/null 2>&1; then
    missing_list="$(percussion_missing_packages | tr '\n' ' ')"
    echo "missing:    ${missing_list:-none}"
  fi
  echo "mpirun:     $(command -v mpirun)"
  echo "python:     $(percussion_python)"
fi
