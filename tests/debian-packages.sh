#!/usr/bin/env bash
# The Debian packages the lab and the test suite need beyond Python and Go, in one place: `make test` (and
# `make integration`), `make lab-up` (with `lab`) and .ci/run call it. apt-get runs only when one is missing: as root itself,
# otherwise through sudo. Prints nothing when all are there.
set -euo pipefail

# `lab`: only what the lab needs (make lab-up, make region); no argument: everything the tests need too.
scope=${1:-all}
need=()
# Checked by what each brings, so a tool installed another way counts too. Go comes with the machine
# image (Debian's golang is too old for the pinned modules).
for tool in make gcc git python3; do
  command -v "$tool" >/dev/null || need+=("$tool")
done
# The lab's Keystones cache in memcached, as upstream's do (lab/regionlab/memcached.py).
command -v memcached >/dev/null || need+=(memcached)
# The storage pools' real Ceph (lab/regionlab/ceph.py): mon, mgr, OSDs, MDS, RADOS gateway, the keyring tools and
# librados for Python.
for daemon in ceph-mon ceph-mgr ceph-osd ceph-mds radosgw; do
  command -v "$daemon" >/dev/null || need+=("$daemon")
done
command -v ceph-authtool >/dev/null || need+=(ceph-common)
[ -e /usr/lib/python3/dist-packages/rados.cpython-311-x86_64-linux-gnu.so ] || need+=(python3-rados)
# The control plane's real OVN and a chassis per hypervisor Node (lab/regionlab/ovn.py).
command -v ovn-northd >/dev/null || need+=(ovn-central)
command -v ovn-controller >/dev/null || need+=(ovn-host)
command -v ovs-vswitchd >/dev/null || need+=(openvswitch-switch)
if [ "$scope" = all ]; then
  # With shellcheck present, ansible-test sanity checks the shell scripts instead of skipping them.
  command -v shellcheck >/dev/null || need+=(shellcheck)
  # The region report's browser test (tests/integration/test_region_report.py): headless Chromium and its WebDriver.
  command -v chromium >/dev/null || need+=(chromium)
  command -v chromedriver >/dev/null || need+=(chromium-driver)
  # Only recommended by chromium: without a font its screenshot shows boxes for text.
  [ -d /usr/share/fonts/truetype/liberation ] || need+=(fonts-liberation)
fi

[ ${#need[@]} -gt 0 ] || exit 0

if [ "$(id -u)" = 0 ]; then
  as_root=()
elif command -v sudo >/dev/null; then
  as_root=(sudo)
else
  echo "debian-packages: missing ${need[*]}; install them as root: apt-get install ${need[*]}" >&2
  exit 1
fi
if ! command -v apt-get >/dev/null; then
  echo "debian-packages: missing ${need[*]} and no apt-get to install them with" >&2
  exit 1
fi
echo "debian-packages: installing ${need[*]}"
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}"
