#!/usr/bin/env bash
# GVSoC as upstream builds it: the PULP cores keep floats in the integer
# registers (-DISS_SINGLE_REGFILE=1, the Zfinx convention of the real Siracusa
# cluster cores, pulp-sdk's `-march=rv32imc_zfinx_xpulpv3`). ../shared/gvsoc is
# built with that flag commented out so that Debian gcc's RV32F code runs
# (../shared/gvsoc/README.md "One change from upstream"); this script undoes
# that one change, for programs built with clang-19 -march=rv32imc_zfinx
# (`bench/gvsoc.py --isa zfinx`, docs/gvsoc.md).
#
#   scripts/build-gvsoc-zfinx.sh [--full|--iss-only] [--prefix DIR] [--jobs N]
#
# --iss-only (default): configure the sources, build only the PULP core ISS
#   modules (gen_isa_pulp_*; the flag changes nothing else) and overlay them and
#   the patched generator on a copy of ../shared/gvsoc/install.
# --full: build and install the whole siracusa target (about 11+ minutes at -j2).
# The build happens in $DEEPLOY_GVSOC_ZFINX_DIR (default
# ${XDG_CACHE_HOME:-~/.cache}/deeploy-mlir/gvsoc-zfinx); the result is
# <dir>/install (bin/gvsoc). Nothing is written into ../shared or the repo.
# It records the install in .gvsoc.json as "gvsoc_zfinx_home".
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
shared=$(cd "$repo/.." && pwd)/shared/gvsoc

die() { echo "build-gvsoc-zfinx.sh: $*" >&2; exit 1; }

mode=iss-only
work=${DEEPLOY_GVSOC_ZFINX_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/deeploy-mlir/gvsoc-zfinx}
jobs=2
while [ $# -gt 0 ]; do
    case "$1" in
        --full) mode=full ;;
        --iss-only) mode=iss-only ;;
        --prefix) shift; work=$1 ;;
        --jobs) shift; jobs=$1 ;;
        *) die "unknown option $1 (--full, --iss-only, --prefix DIR, --jobs N)" ;;
    esac
    shift
done
src=${GVSOC_SRC:-$shared/gvsoc-src.tar.xz}
base=${GVSOC_BASE:-$shared/install}
[ -f "$src" ] || die "no GVSoC sources at $src (set GVSOC_SRC)"

pkgs="cmake g++ libelf-dev liblz4-dev libsndfile1-dev libxtensor-dev libxsimd-dev"
if ! dpkg -s $pkgs >/dev/null 2>&1; then
    sudo=""; if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
    $sudo apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $pkgs >/dev/null
fi

mkdir -p "$work"
work=$(cd "$work" && pwd)
srcdir=$work/src
inst=$work/install
# extract once per tarball (a re-run reuses the tree and its build directory)
stamp="$(stat -c '%s %Y' "$src") $(basename "$src")"
if [ "$(cat "$work/src.stamp" 2>/dev/null)" != "$stamp" ]; then
    rm -rf "$srcdir" "$work/src.stamp"; mkdir -p "$srcdir"
    tar -xJf "$src" -C "$srcdir"
    echo "$stamp" > "$work/src.stamp"
fi
if [ ! -d "$srcdir/gvrun" ]; then srcdir=$(dirname "$(find "$srcdir" -maxdepth 2 -name gvrun -type d | head -1)"); fi
cores=$srcdir/pulp/pulp/cpu/iss/pulp_cores.py
# re-enable the upstream line: floats in the integer register file (Zfinx)
sed -i "s/^\(\s*\)#\s*\('-DISS_SINGLE_REGFILE=1',\).*$/\1\2/" "$cores"
grep -q "^\s*'-DISS_SINGLE_REGFILE=1'," "$cores" || die "could not re-enable -DISS_SINGLE_REGFILE=1 in $cores"

if [ ! -x "$work/venv/bin/python" ]; then
    python3 -m venv "$work/venv"
fi
# shellcheck disable=SC1091
. "$work/venv/bin/activate"
cd "$srcdir"
python -m pip install -q -r requirements.txt -r core/requirements.txt \
    -r gapy/requirements.txt -r gvrun/requirements.txt
export PATH=$PWD/gapy/bin:$PATH
t0=$(date +%s)
if [ "$mode" = full ]; then
    rm -rf "$inst"
    cmake -S gvrun -B build/gvrun -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$inst" >/dev/null
    cmake --build build/gvrun -j "$jobs" && cmake --install build/gvrun >/dev/null
fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$inst" \
    -DGVSOC_MODULES="$PWD/core/models;$PWD/pulp;$PWD/pulp/targets;$PWD/gvrun/python;" \
    -DGVSOC_TARGETS="siracusa" -DCMAKE_SKIP_INSTALL_RPATH=false \
    -DBUILD_PROFILE=OFF -DBUILD_DEBUG=OFF >/dev/null
if [ "$mode" = full ]; then
    cmake --build build -j "$jobs" && cmake --install build >/dev/null
else
    [ -x "$base/bin/gvsoc" ] || die "no GVSoC install to overlay at $base (set GVSOC_BASE or use --full)"
    targets=$(cmake --build build --target help | sed -n 's/^\.\.\. \(gen_isa_pulp_[A-Za-z0-9_]*\).*$/\1/p' | sort -u)
    [ -n "$targets" ] || die "no gen_isa_pulp_* targets in the configured build"
    # shellcheck disable=SC2086
    cmake --build build -j "$jobs" --target $targets
    rm -rf "$inst"
    cp -a "$base" "$inst"
    chmod -R u+w "$inst"
    # the generator that names the ISS modules (its flags are part of the name)
    find "$inst" -path '*pulp/cpu/iss/pulp_cores.py' -exec cp "$cores" {} \;
    for t in $targets; do
        so=$(find build -name "$t.so" | head -1)
        [ -n "$so" ] || die "built $t but found no $t.so"
        # installed without the _optim suffix (core/cmake/vp_model.cmake)
        cp "$so" "$inst/models/${t%_optim}.so"
    done
fi
t1=$(date +%s)
[ -x "$inst/bin/gvsoc" ] || die "no gvsoc in $inst"
deactivate
python3 - "$repo/.gvsoc.json" "$inst" <<'EOF'
import json, os, sys
path, home = sys.argv[1:]
cfg = {}
if os.path.exists(path):
    with open(path) as f:
        cfg = json.load(f)
cfg["gvsoc_zfinx_home"] = home
with open(path, "w") as f:
    json.dump(cfg, f, indent=2)
    f.write("\n")
EOF
echo "GVSoC (Zfinx cores, $mode build, $((t1 - t0)) s): $inst (recorded in .gvsoc.json)"
