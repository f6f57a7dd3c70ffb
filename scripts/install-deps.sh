#!/bin/sh
# Installs the Debian 12 packages plumb builds and tests with, when missing.
# Runs apt-get only if something is absent, so a prepared machine pays nothing.
# Open MPI (libopenmpi-dev, openmpi-bin) is optional like PAPI: without it plumb
# builds, and plumb cluster says what to install.  libudev-dev: plumb.pc names
# hwloc in Requires.private, and hwloc.pc's static link asks for -ludev.
set -e
pkgs="build-essential clang llvm pkg-config libcriterion-dev libhwloc-dev libudev-dev libzstd-dev libjson-c-dev libgsl-dev
      libpapi-dev libpfm4-dev papi-tools gnuplot-nox valgrind linux-perf
      chromium poppler-utils libopenmpi-dev openmpi-bin tmux"
# llvm-16 beside Debian 12's default LLVM 14: plumb explain prices code with
# the newest llvm-mca installed, and LLVM 16 models Golden Cove cores.  Asked
# for only where the distribution has it (Debian 12 does, also before its
# first apt-get update, when apt-cache knows nothing yet).
if grep -q '^VERSION_CODENAME=bookworm' /etc/os-release 2>/dev/null || apt-cache show llvm-16 >/dev/null 2>&1; then
	pkgs="$pkgs llvm-16"
fi
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "plumb: missing Debian packages:$missing (run as root, or: sudo apt-get install$missing)" >&2
	exit 1
fi
echo "plumb: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends $missing >/dev/null
