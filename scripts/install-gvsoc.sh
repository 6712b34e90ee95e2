#!/usr/bin/env bash
# GVSoC (the PULP simulator, pulp-open and siracusa targets) and pulp-runtime,
# for `deeploy-mlir run --on gvsoc` and tests/test_gvsoc.py (docs/gvsoc.md).
#
# Where GVSoC comes from, first match wins:
#   1. $GVSOC_HOME (an install prefix with bin/gvsoc), and $PULP_RUNTIME_HOME;
#   2. ../shared/gvsoc/install and ../shared/gvsoc/pulp-runtime next to the repo;
#   3. a build from the sources in $GVSOC_SRC (default ../shared/gvsoc/gvsoc-src.tar.xz)
#      into build/gvsoc/install, with the recipe of ../shared/gvsoc/README.md
#      (about 11 minutes per target on 2 cores; needs cmake, g++ and the -dev packages).
# It installs GVSoC's Python run requirements (pip) and writes .gvsoc.json
# ({"gvsoc_home", "pulp_runtime_home"}, git-ignored), which deeploy-mlir reads
# when GVSOC_HOME / PULP_RUNTIME_HOME are not set. Nothing of GVSoC or
# pulp-runtime is copied into the repository. Then it builds the Zfinx GVSoC
# (scripts/build-gvsoc-zfinx.sh, at the end).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
shared=$(cd "$repo/.." && pwd)/shared/gvsoc

die() { echo "install-gvsoc.sh: $*" >&2; exit 1; }

home=${GVSOC_HOME:-}
prt=${PULP_RUNTIME_HOME:-}
reqs=""
if [ -z "$home" ] && [ -x "$shared/install/bin/gvsoc" ]; then
    home=$shared/install
fi
if [ -z "$prt" ] && [ -f "$shared/pulp-runtime/kernel/crt0.S" ]; then
    prt=$shared/pulp-runtime
fi
if [ -f "$shared/requirements-run.txt" ]; then
    reqs=$shared/requirements-run.txt
fi

if [ -z "$home" ]; then
    # build from the sources, the recipe of ../shared/gvsoc/README.md
    src=${GVSOC_SRC:-$shared/gvsoc-src.tar.xz}
    [ -f "$src" ] || die "no GVSoC: set GVSOC_HOME, or GVSOC_SRC to the gvsoc sources tarball"
    work=$repo/build/gvsoc
    if [ ! -x "$work/install/bin/gvsoc" ]; then
        pkgs="cmake g++ libelf-dev liblz4-dev libsndfile1-dev libxtensor-dev libxsimd-dev"
        if ! dpkg -s $pkgs >/dev/null 2>&1; then
            sudo=""; if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
            $sudo apt-get update -qq
            $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $pkgs >/dev/null
        fi
        rm -rf "$work/src"; mkdir -p "$work/src"
        tar -xJf "$src" -C "$work/src"
        srcdir=$work/src
        if [ ! -d "$srcdir/gvrun" ]; then srcdir=$(dirname "$(find "$work/src" -maxdepth 2 -name gvrun -type d | head -1)"); fi
        # the one change from upstream (../shared/gvsoc/README.md): standard RV32F
        # register file, since Debian's gcc emits RV32F code, not Zfinx
        sed -i 's/^\(\s*\)\(.*-DISS_SINGLE_REGFILE=1.*\)$/\1# \2/' "$srcdir/pulp/pulp/cpu/iss/pulp_cores.py"
        (
            cd "$srcdir"
            python3 -m pip install -q -r requirements.txt -r core/requirements.txt \
                -r gapy/requirements.txt -r gvrun/requirements.txt
            export PATH=$PWD/gapy/bin:$PATH
            cmake -S gvrun -B build/gvrun -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$work/install"
            cmake --build build/gvrun -j 2 && cmake --install build/gvrun
            cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$work/install" \
                -DGVSOC_MODULES="$PWD/core/models;$PWD/pulp;$PWD/pulp/targets;$PWD/gvrun/python;" \
                -DGVSOC_TARGETS="pulp-open;siracusa" -DCMAKE_SKIP_INSTALL_RPATH=false \
                -DBUILD_PROFILE=OFF -DBUILD_DEBUG=OFF
            cmake --build build -j 2 && cmake --install build
        )
    fi
    home=$work/install
fi
[ -x "$home/bin/gvsoc" ] || die "no GVSoC simulator at $home/bin/gvsoc"
[ -n "$prt" ] || die "no pulp-runtime: set PULP_RUNTIME_HOME (github.com/pulp-platform/pulp-runtime)"
[ -f "$prt/kernel/crt0.S" ] || die "no pulp-runtime at $prt"

# GVSoC's launcher runs on the python3 on PATH: its run requirements
if [ -n "$reqs" ]; then
    python3 -m pip install -q -r "$reqs"
else
    python3 -m pip install -q pyelftools prettytable rich psutil typing_extensions six pexpect
fi

python3 - "$repo/.gvsoc.json" "$home" "$prt" <<'EOF'
import json, os, sys
path, home, prt = sys.argv[1:]
cfg = {}
if os.path.exists(path):  # keep the Zfinx build's record (scripts/build-gvsoc-zfinx.sh)
    with open(path) as f:
        old = json.load(f)
    if isinstance(old, dict) and isinstance(old.get("gvsoc_zfinx_home"), str):
        cfg["gvsoc_zfinx_home"] = old["gvsoc_zfinx_home"]
cfg.update({"gvsoc_home": home, "pulp_runtime_home": prt})
with open(path, "w") as f:
    json.dump(cfg, f, indent=2)
    f.write("\n")
EOF
echo "GVSoC: $home; pulp-runtime: $prt (recorded in .gvsoc.json)"

# The GVSoC of the chip's own float ISA (Zfinx: the siracusa_zfinx board,
# bench/gvsoc.py --isa zfinx, tests/test_calibration_zfinx.py): the PULP core
# ISS modules built with upstream's register file over a copy of the install
# above (scripts/build-gvsoc-zfinx.sh; 81 s at -j2, 2 s when built already).
# It needs the GVSoC sources; DEEPLOY_NO_ZFINX_GVSOC=1 skips it.
if [ "${DEEPLOY_NO_ZFINX_GVSOC:-0}" != 1 ]; then
    if [ -f "${GVSOC_SRC:-$shared/gvsoc-src.tar.xz}" ]; then
        GVSOC_BASE=$home bash "$repo/scripts/build-gvsoc-zfinx.sh"
    else
        echo "install-gvsoc.sh: no GVSoC sources (GVSOC_SRC): the Zfinx GVSoC is not built" >&2
    fi
fi
