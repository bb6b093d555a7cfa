# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""tests/debian-packages.sh, the one place that installs the suite's Debian packages (make test, .ci/run): apt-get
only for what is missing, as root itself, else through sudo, else a message naming the packages."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os
import shutil
import subprocess

import pytest

from conftest import REPO

SCRIPT = os.path.join(REPO, "tests", "debian-packages.sh")
TOOLS = ("make", "gcc", "git", "python3", "shellcheck", "memcached", "ceph-mon", "ceph-mgr", "ceph-osd", "ceph-mds",
         "radosgw", "ceph-authtool",
         "ovn-northd", "ovn-controller", "ovs-vswitchd", "chromium", "chromedriver")
# The checks that are not commands, of the machine the test runs on: the fonts' directory, librados for Python.
FONTS = [] if os.path.isdir("/usr/share/fonts/truetype/liberation") else ["fonts-liberation"]
RADOS = [] if os.path.exists("/usr/lib/python3/dist-packages/rados.cpython-311-x86_64-linux-gnu.so") else ["python3-rados"]


def _stub(path, body):
    with open(path, "w") as handle:
        handle.write("#!%s\n%s\n" % (shutil.which("bash"), body))
    os.chmod(path, 0o755)


@pytest.fixture
def machine(tmp_path):
    """A PATH of stubs: `id -u` answers $FAKE_UID, apt-get and sudo write what they were asked to a log."""
    bin_dir, log = tmp_path / "bin", tmp_path / "log"
    bin_dir.mkdir()
    log.write_text("")
    for name in ("bash", "env"):
        os.symlink(shutil.which(name), str(bin_dir / name))
    _stub(bin_dir / "id", 'echo "$FAKE_UID"')
    _stub(bin_dir / "apt-get", 'echo "apt-get $* DEBIAN_FRONTEND=$DEBIAN_FRONTEND" >> %s' % log)
    _stub(bin_dir / "sudo", 'echo sudo >> %s; exec "$@"' % log)

    def run(present, uid=0, sudo=True, args=()):
        for tool in present:
            _stub(bin_dir / tool, "true")
        if not sudo:
            os.remove(str(bin_dir / "sudo"))
        proc = subprocess.run([shutil.which("bash"), SCRIPT] + list(args), env={"PATH": str(bin_dir), "FAKE_UID": str(uid)},
                              capture_output=True, text=True, timeout=60, check=False)
        return proc, log.read_text().splitlines()
    return run


def _install(*packages):
    return "apt-get install -y -qq --no-install-recommends %s DEBIAN_FRONTEND=noninteractive" % " ".join(packages)


UPDATE = "apt-get update -qq DEBIAN_FRONTEND=noninteractive"


def test_nothing_missing_runs_no_apt_get(machine):
    proc, log = machine(TOOLS)
    assert proc.returncode == 0, proc.stderr
    if FONTS or RADOS:  # a machine without them (make test installs them before the unit tests)
        assert log == [UPDATE, _install(*(RADOS + FONTS))]
    else:
        assert (proc.stdout, proc.stderr, log) == ("", "", [])


def test_as_root_it_installs_only_what_is_missing(machine):
    proc, log = machine([t for t in TOOLS if t not in ("chromium", "chromedriver")])
    assert proc.returncode == 0, proc.stderr
    assert log == [UPDATE, _install(*(RADOS + ["chromium", "chromium-driver"] + FONTS))]


def test_not_root_it_installs_through_sudo(machine):
    proc, log = machine([t for t in TOOLS if t != "shellcheck"], uid=1000)
    assert proc.returncode == 0, proc.stderr
    assert log == ["sudo", UPDATE, "sudo", _install(*(RADOS + ["shellcheck"] + FONTS))]


def test_not_root_without_sudo_it_names_what_is_missing(machine):
    proc, log = machine([t for t in TOOLS if t != "chromedriver"], uid=1000, sudo=False)
    assert proc.returncode == 1 and log == []
    assert "missing %s" % " ".join(RADOS + ["chromium-driver"] + FONTS) in proc.stderr


def test_the_lab_scope_installs_what_the_lab_needs_and_nothing_for_the_tests(machine):
    proc, log = machine([t for t in TOOLS if t not in ("memcached", "ceph-osd", "ovn-controller", "chromium")],
                        args=["lab"])
    assert proc.returncode == 0, proc.stderr
    assert log == [UPDATE, _install(*(["memcached", "ceph-osd"] + RADOS + ["ovn-host"]))]
