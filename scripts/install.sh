#!/usr/bin/env bash
# LiteRecorder: install the toolchain (Debian packages + a virtualenv with pinned PyPI versions).
#
# Idempotent: Debian packages are only installed when one is missing, the virtualenv is only
# (re)created when scripts/requirements.txt changed. Called by `make install` (stamp file).
#
# Usage: scripts/install.sh [VENV_DIR]      (default: <repo>/.venv)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
VENV=${1:-$ROOT/.venv}

# Debian packages -----------------------------------------------------------------------------------
# Required: Verilator simulation (liblz4-dev: the FST writer of --trace builds), RISC-V BIOS build,
# LiteX sim modules, QEMU NVMe interop, Yosys, tclsh (runs the boards' Vivado scripts against a
# model of the Vivado commands, test/test_board_tcl.py), exfatprogs and exfat-fuse (fsck.exfat, mkfs.exfat and a
# real exFAT driver check the volumes of rec_format fs=exfat: test/test_exfat_host.py, test_system_exfat.py).
DEB_PKGS="verilator libevent-dev libjson-c-dev zlib1g-dev liblz4-dev g++ make perl gcc-riscv64-unknown-elf
meson ninja-build ccache yosys qemu-system-x86 python3-venv tcl exfatprogs exfat-fuse"
missing=""
for p in $DEB_PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    echo "[install] Debian packages missing:$missing"
    SUDO=""
    if [ "$(id -u)" != 0 ]; then
        if command -v sudo >/dev/null; then SUDO=sudo; else
            echo "[install] ERROR: not root and no sudo: install these Debian packages:$missing" >&2
            exit 1
        fi
    fi
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing
fi

# Python virtualenv ---------------------------------------------------------------------------------
REQ="$ROOT/scripts/requirements.txt"
STAMP="$VENV/.requirements.sha256"
want=$(sha256sum "$REQ" | cut -d' ' -f1)
if [ ! -x "$VENV/bin/python" ] || [ "$(cat "$STAMP" 2>/dev/null)" != "$want" ]; then
    echo "[install] creating virtualenv $VENV"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q --disable-pip-version-check -r "$REQ"
    "$VENV/bin/pip" install -q --disable-pip-version-check --no-build-isolation --no-deps -e "$ROOT"
    echo "$want" > "$STAMP"
fi
"$VENV/bin/python" -c "import migen, litex, litedram, litepcie, litescope, literecorder" \
    || { echo "[install] ERROR: the virtualenv $VENV is broken: remove it and re-run" >&2; exit 1; }
echo "[install] OK: $VENV"
