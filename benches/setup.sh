#!/usr/bin/env bash
# Create benches/.venv and install the benchmark's Python dependencies (idempotent):
# qif (libqif), numpy, highspy (HiGHS) from requirements.txt, and the metricdp wheel built
# from python/ (maturin).
#   bash benches/setup.sh          # from anywhere
# Needs: python3 (>= 3.9) with venv, network access to PyPI.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VENV="$HERE/.venv"
PY="${PYTHON:-python3}"

if [ ! -x "$VENV/bin/python" ]; then
    echo "setup.sh: creating venv at $VENV"
    "$PY" -m venv "$VENV"
fi

# Only talk to PyPI when something is missing (re-runs are fast and offline-safe).
if ! "$VENV/bin/python" -c 'import qif, numpy, highspy, matplotlib, scipy' >/dev/null 2>&1; then
    echo "setup.sh: installing qif, numpy and highspy"
    "$VENV/bin/python" -m pip install --quiet --upgrade pip
    "$VENV/bin/python" -m pip install --quiet -r "$HERE/requirements.txt"
fi

# The Python package (python/), built from this checkout and installed into the venv.
if ! "$VENV/bin/python" -c 'import maturin' >/dev/null 2>&1; then
    "$VENV/bin/python" -m pip install --quiet "maturin==1.16.0"
fi
rm -rf "$HERE/.work/dist"
"$VENV/bin/maturin" build --quiet --release --locked -m "$HERE/../python/Cargo.toml" -o "$HERE/.work/dist"
"$VENV/bin/python" -m pip install --quiet --force-reinstall --no-deps "$HERE"/.work/dist/metricdp-*.whl

"$VENV/bin/python" - <<'PY'
import numpy, qif, highspy, metricdp, sys

def ver(mod, dist):
    v = getattr(mod, "__version__", None)
    if v is None:
        try:
            from importlib.metadata import version
            v = version(dist)
        except Exception:
            v = "?"
    return v

print(f"setup.sh: ok: python {sys.version.split()[0]}, numpy {numpy.__version__}, "
      f"qif {ver(qif, 'qif')}, highspy {ver(highspy, 'highspy')}, metricdp {metricdp.__version__}")
PY
