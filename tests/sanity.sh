#!/usr/bin/env bash
# ansible-test sanity needs the collection at .../ansible_collections/c5c3/cobaltcore as a real
# directory (it resolves symlinks), so it runs on a copy of the tracked and new files.
# It runs --local in a venv of its own (.cache/sanity-venv) with the requirements ansible-test
# installs from PyPI: its --venv and --docker modes need a pip bootstrap download or containers,
# neither of which exists here. Only Python 3.11 is tested (the one Python of this machine).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
venv="$repo/.cache/sanity-venv"
core=$(grep -E '^ansible-core==' "$repo/requirements-dev.txt")
have=$("$venv/bin/python" -c 'import ansible.release as r; print("ansible-core==" + r.__version__)' 2>/dev/null || true)
if [ "$have" != "$core" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet "$core"
fi
# Seed ansible-test's pip bootstrap cache (a download from a host not reachable here)
# with our own small bootstrap, under the name of the pip version ansible-test pins.
pip_version=$("$venv/bin/python" -c 'import re, ansible_test._internal.python_requirements as r; print(re.search(r"pip=.([0-9.]+).", open(r.__file__).read()).group(1))')
mkdir -p ~/.ansible/test/cache
cp "$repo/tests/sanity_get_pip.py" ~/.ansible/test/cache/"get_pip_${pip_version//./_}.py"
dest="$repo/.cache/sanity/ansible_collections/c5c3/cobaltcore"
rm -rf "$dest"
mkdir -p "$dest"
cd "$repo"
git ls-files -co --exclude-standard -z | grep -zv '^lab/' | xargs -0 cp --parents -t "$dest"
# The collections this one builds on (doc fragments, module_utils), from the ansible package.
deps="$repo/.venv/lib/python3.11/site-packages/ansible_collections"
for collection in kubernetes/core openstack/cloud; do
  mkdir -p "$(dirname "$dest")/../$collection"
  cp -r "$deps/$collection/." "$(dirname "$dest")/../$collection/"
done
cd "$dest"
git init -q . && git add -A >/dev/null
PATH="$venv/bin:$PATH" ansible-test sanity --local --requirements --python 3.11 --color no "$@"
