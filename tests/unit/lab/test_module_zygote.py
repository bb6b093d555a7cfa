# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Module processes forked from a per-run zygote (lab/module_zygote.py): which commands it takes, and that a
process it forks behaves as `python <AnsiballZ file>` would (output, exit status, environment, working
directory, arguments, a signal), with ansible-core's module_utils loaded as on a target, not a controller."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import base64
import io
import os
import signal
import subprocess
import sys
import textwrap
import time
import zipfile

import pytest

from conftest import REPO

sys.path.insert(0, os.path.join(REPO, "lab"))
import module_zygote  # noqa: E402  pylint: disable=wrong-import-position

PYTHON = sys.executable
MODULE = "/root/.ansible/tmp/ansible-tmp-1.2-3-4/AnsiballZ_apply.py"


@pytest.mark.parametrize("cmd, expected", [
    ("/bin/sh -c '%s %s && sleep 0'" % (PYTHON, MODULE), ({}, MODULE)),
    ("/bin/sh -c 'LANG=C.UTF-8 LC_ALL=C.UTF-8 %s %s && sleep 0'" % (PYTHON, MODULE),
     ({"LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}, MODULE)),
    ("/bin/sh -c 'KUBECONFIG='\"'\"'/a b/c'\"'\"' %s %s && sleep 0'" % (PYTHON, MODULE),
     ({"KUBECONFIG": "/a b/c"}, MODULE)),
])
def test_a_module_command_of_this_interpreter_is_taken(cmd, expected):
    assert module_zygote.module_command(cmd, PYTHON) == expected


@pytest.mark.parametrize("cmd", [
    "/bin/sh -c '/usr/bin/python2 %s && sleep 0'" % MODULE,  # another interpreter
    "/bin/sh -c '%s %s'" % (PYTHON, MODULE),  # not Ansible's form
    "/bin/sh -c 'rm -f -r /root/.ansible/tmp/ansible-tmp-1.2-3-4/ > /dev/null 2>&1 && sleep 0'",
    "/bin/sh -c '%s && sleep 0'" % PYTHON,  # pipelining: the module comes on stdin
    "/bin/sh -c '%s /tmp/script.py && sleep 0'" % PYTHON,  # not an AnsiballZ file
    "/bin/sh -c '%s AnsiballZ_apply.py && sleep 0'" % PYTHON,  # a relative path
    "/bin/sh -c 'sudo -H -S -n -u root %s %s && sleep 0'" % (PYTHON, MODULE),  # become
    "/bin/sh -c '1X=2 %s %s && sleep 0'" % (PYTHON, MODULE),  # not a variable
    "/bin/sh -c 'cd /tmp; %s %s && sleep 0'" % (PYTHON, MODULE),
    "/bin/sh -c 'unbalanced",
    b"/bin/sh -c 'python AnsiballZ_x.py && sleep 0'",
])
def test_any_other_command_is_left_to_the_connection(cmd):
    assert module_zygote.module_command(cmd, PYTHON) is None


@pytest.fixture(scope="module")
def zygote():
    process, path = module_zygote.start()
    yield path
    process.terminate()
    process.wait(timeout=10)
    assert not os.path.exists(os.path.dirname(path)), "the zygote removes its socket's directory"


def _script(tmp_path, body):
    path = tmp_path / "AnsiballZ_probe.py"
    path.write_text(textwrap.dedent(body))
    return str(path)


def test_a_module_gets_its_environment_directory_and_arguments_and_returns_its_output(zygote, tmp_path):
    path = _script(tmp_path, """
        import json, os, sys
        import ansible.module_utils._internal as internal
        print(json.dumps(dict(env=os.environ.get("PROBE"), lang=os.environ.get("LANG"), cwd=os.getcwd(),
                              argv=sys.argv, path0=sys.path[0], main=__name__, file=__file__,
                              controller=internal.is_controller,
                              controller_code="ansible._internal" in sys.modules,
                              basic="ansible.module_utils.basic" in sys.modules)))
        sys.stderr.write("to stderr\\n")
        sys.exit(3)
    """)
    os.environ["PROBE"] = "from the worker"
    try:
        rc, out, err = module_zygote.run(zygote, path, {"LANG": "C.UTF-8"}, cwd=str(tmp_path))
    finally:
        del os.environ["PROBE"]
    import json
    seen = json.loads(out)
    assert rc == 3 and err == b"to stderr\n"
    assert seen == dict(env="from the worker", lang="C.UTF-8", cwd=str(tmp_path), argv=[path],
                        path0=str(tmp_path), main="__main__", file=path, controller=False,
                        controller_code=False, basic=True)


def test_an_exception_is_a_traceback_and_status_1_and_a_signal_is_negative(zygote, tmp_path):
    rc, out, err = module_zygote.run(zygote, _script(tmp_path, "raise RuntimeError('broken module')\n"), {})
    assert rc == 1 and out == b"" and b"RuntimeError: broken module" in err
    rc, out, err = module_zygote.run(zygote, _script(tmp_path, """
        import os, signal, sys
        sys.stdout.write("before\\n")
        sys.stdout.flush()
        os.kill(os.getpid(), signal.SIGKILL)
    """), {})
    assert (rc, out) == (-signal.SIGKILL, b"before\n")


def test_stdin_reaches_the_module_and_modules_run_side_by_side(zygote, tmp_path):
    path = _script(tmp_path, "import sys, time\ntime.sleep(1)\nsys.stdout.write(sys.stdin.read().upper())\n")
    import threading
    results = []
    started = time.monotonic()
    threads = [threading.Thread(target=lambda n=n: results.append(module_zygote.run(zygote, path, {},
                                                                                    stdin_data=b"run %d" % n)))
               for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == [(0, b"RUN %d" % n, b"") for n in range(4)]
    assert time.monotonic() - started < 3.5, "four one-second modules ran one after the other"


def test_the_zygote_ends_with_the_process_that_started_it(tmp_path):
    proc = subprocess.run([PYTHON, "-c", textwrap.dedent("""
        import sys
        sys.path.insert(0, %r)
        import module_zygote
        process, path = module_zygote.start()
        print(process.pid, path)
    """ % os.path.join(REPO, "lab"))], capture_output=True, text=True, check=True)
    pid, path = proc.stdout.split()
    deadline = time.monotonic() + 10
    while os.path.exists("/proc/%s" % pid) and _state(pid) != "Z" and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not os.path.exists("/proc/%s" % pid) or _state(pid) == "Z", "the zygote outlived its parent"
    assert not os.path.exists(os.path.dirname(path))


def _state(pid):
    try:
        with open("/proc/%s/stat" % pid) as handle:
            return handle.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


def test_an_ansible_run_forks_its_modules_from_the_zygote_unless_switched_off(tmp_path):
    """The module's own process: a fork of the zygote (its command line), or `python AnsiballZ_command.py`."""
    def parent_of_the_command(**env):
        run_env = dict(os.environ, ANSIBLE_LOCAL_TEMP=str(tmp_path / "local"), **env)
        proc = subprocess.run([os.path.join(os.path.dirname(PYTHON), "ansible"), "-i", "localhost,", "-c", "local",
                               "localhost", "-m", "ansible.builtin.shell", "-a", "tr '\\0' ' ' < /proc/$PPID/cmdline",
                               "-e", "ansible_python_interpreter=%s" % PYTHON], env=run_env, capture_output=True,
                              text=True, check=False)
        assert proc.returncode == 0 and "CHANGED" in proc.stdout, proc.stdout + proc.stderr
        return proc.stdout
    assert "cobaltcore_module_zygote" in parent_of_the_command()
    assert "AnsiballZ_command.py" in parent_of_the_command(COBALTCORE_MODULE_ZYGOTE="0")


def test_a_zygote_that_is_gone_runs_nothing_and_the_command_runs_as_before(tmp_path, monkeypatch):
    with pytest.raises(module_zygote.NotStarted):
        module_zygote.run(str(tmp_path / "no-socket"), _script(tmp_path, "print('ran')\n"), {})
    import ansiballz_bytecode  # pylint: disable=import-outside-toplevel
    monkeypatch.setitem(sys.modules, "cobaltcore_module_zygote", module_zygote)
    monkeypatch.setattr(ansiballz_bytecode, "_ZYGOTE", {"path": str(tmp_path / "no-socket")})
    calls = []

    class Connection:
        become = None
        cwd = None
        _play_context = type("PlayContext", (), {"remote_addr": "localhost"})()

    def exec_command(cmd, in_data=None, sudoable=True):
        calls.append(cmd)
        return 0, b"as before", b""
    cmd = "/bin/sh -c '%s %s && sleep 0'" % (PYTHON, _script(tmp_path, "print('ran')\n"))
    assert ansiballz_bytecode.exec_module_in_zygote(Connection(), exec_command, cmd) == (0, b"as before", b"")
    assert calls == [cmd] and "path" not in ansiballz_bytecode._ZYGOTE


def test_a_zygote_that_ends_during_a_module_does_not_run_it_again(tmp_path):
    process, path = module_zygote.start()
    marker = tmp_path / "runs"
    script = _script(tmp_path, """
        import os, signal, sys
        with open(%r, "a") as handle:
            handle.write("run\\n")
        os.kill(os.getppid(), signal.SIGKILL)  # the zygote
        sys.exit(0)
    """ % str(marker))
    try:
        rc, out, err = module_zygote.run(path, script, {})
    finally:
        process.wait(timeout=10)
    assert rc == 1 and b"the module zygote ended before it reported the exit status" in err
    assert marker.read_text() == "run\n"


def test_a_zygote_that_cannot_start_says_so_and_leaves_no_directory(tmp_path, monkeypatch):
    monkeypatch.setattr(module_zygote.tempfile, "tempdir", str(tmp_path))
    with pytest.raises(OSError, match="did not start"):
        module_zygote.start(interpreter="/bin/false")
    assert os.listdir(tmp_path) == []


def _ansiballz(path, entries):
    """A file ending as an AnsiballZ wrapper does: its zip, base64, as the call's last argument."""
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w") as archive:
        for entry in entries:
            archive.writestr(entry, "")
    path.write_text("_ansiballz_main(\nmodule_fqn='x',\nzip_data='%s',\n)\n" % base64.b64encode(data.getvalue()).decode())
    return str(path)


def test_a_costly_package_is_imported_once_a_module_whose_zip_needs_it_comes(tmp_path, monkeypatch):
    package = tmp_path / "lib"
    package.mkdir()
    (package / "zygote_costly_pkg.py").write_text("import sys\nsys.modules[__name__].count = 1\n")
    monkeypatch.syspath_prepend(str(package))
    monkeypatch.delitem(sys.modules, "zygote_costly_pkg", raising=False)
    monkeypatch.setattr(module_zygote, "_LOOKED_INTO", set())
    imports = {"ansible_collections/some/cloud/plugins/module_utils/base.py": "zygote_costly_pkg"}
    module_zygote.preload_for(_ansiballz(tmp_path / "AnsiballZ_a.py", ["ansible/module_utils/basic.py"]), imports)
    (tmp_path / "AnsiballZ_b.py").write_text("not an AnsiballZ file")
    module_zygote.preload_for(str(tmp_path / "AnsiballZ_b.py"), imports)
    module_zygote.preload_for(str(tmp_path / "missing.py"), imports)
    assert "zygote_costly_pkg" not in sys.modules
    # A module's zip is read once per run: the same module name again is not looked into.
    (tmp_path / "again").mkdir()
    module_zygote.preload_for(_ansiballz(tmp_path / "again" / "AnsiballZ_a.py", list(imports)), imports)
    assert "zygote_costly_pkg" not in sys.modules
    module_zygote.preload_for(_ansiballz(tmp_path / "AnsiballZ_c.py", list(imports)), imports)
    assert sys.modules["zygote_costly_pkg"].count == 1
    monkeypatch.delitem(sys.modules, "zygote_costly_pkg")


def test_a_package_that_fails_to_import_is_not_tried_again(tmp_path, monkeypatch):
    monkeypatch.setattr(module_zygote, "_LOOKED_INTO", set())
    monkeypatch.setattr(module_zygote, "_UNIMPORTABLE", set())
    imports = {"ansible_collections/some/cloud/plugins/module_utils/base.py": "zygote_absent_pkg"}
    tried = []

    def import_module(name):
        tried.append(name)
        raise ImportError(name)
    monkeypatch.setattr(module_zygote.importlib, "import_module", import_module)
    for name in ("AnsiballZ_a.py", "AnsiballZ_b.py"):
        module_zygote.preload_for(_ansiballz(tmp_path / name, list(imports)), imports)
    assert tried == ["zygote_absent_pkg"]


def test_the_openstack_sdk_is_named_by_the_module_base_that_imports_it():
    import ansible_collections.openstack.cloud.plugins.module_utils.openstack as base  # pylint: disable=import-outside-toplevel
    (entry, name), = module_zygote.IMPORTS_BY_ZIP_ENTRY.items()
    assert base.__file__.endswith(entry) and name == "openstack"
    assert "importlib.import_module('openstack')" in open(base.__file__, encoding="utf-8").read()
