#!/bin/sh
# The virtualenv VENV made by PYTHON, with uv in it: uv installs the hill's
# packages (`make setup`, `make dev`) in a few seconds where pip takes half a
# minute.  The venv is made without pip (ensurepip alone costs seconds); uv
# comes from PyPI through the system's pip when it has one (pip 22.3 and
# newer install into another interpreter with --python), else through the
# venv's own pip, brought by ensurepip (Debian's python3 without python3-pip).
# Usage: sh scripts/venv.sh PYTHON VENV
set -eu
python=$1
venv=$2
uv="uv>=0.5"
[ -x "$venv/bin/python" ] || "$python" -m venv --without-pip "$venv"
[ -x "$venv/bin/uv" ] && exit 0
quiet="--quiet --disable-pip-version-check --root-user-action=ignore"
# shellcheck disable=SC2086 # $quiet is several options
if ! "$python" -m pip --python "$venv/bin/python" install $quiet "$uv" 2>/dev/null; then
    "$venv/bin/python" -m ensurepip --default-pip >/dev/null
    "$venv/bin/python" -m pip install $quiet "$uv"
fi
