# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The waiting modules' action plugins: when progress shows, how lines are relayed, and that results pass as they are."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import importlib
import os
import threading
from unittest import mock

import pytest

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.progress import (
    PROGRESS_FILE_ENV, PROGRESS_INTERVAL_ENV)
from ansible_collections.c5c3.cobaltcore.plugins.plugin_utils import progress

WAITING_MODULES = ("apply", "wait", "gardener_shoot", "flux_releases", "control_plane_health", "ironcore_bmc",
                   "ironcore_server_claim", "hypervisor_nodes", "ovn_verify", "keystone_admin_password",
                   "hypervisor_rollout", "gardener_kubernetes_version", "database_backup", "database_restore",
                   "hypervisor_maintenance", "ovn_database", "storage_maintenance", "key_backup")


@pytest.mark.parametrize("switch, expected", [
    (None, None), ("", None), (True, True), (False, False), ("true", True), ("False", False), ("yes", True),
    ("no", False), ("1", True), (0, False), (" on ", True)])
def test_the_switch_is_a_boolean_or_unset(switch, expected):
    assert progress.settings(switch, None) == (expected, 10)


def test_bad_settings_name_every_bad_variable():
    with pytest.raises(ValueError) as error:
        progress.settings("maybe", "0")
    assert str(error.value) == ("cobaltcore_progress must be true or false (or unset: automatic), got 'maybe'; "
                                "cobaltcore_progress_interval must be a whole number of seconds, at least 1, got '0'")
    for interval in ("x", True, -3, 2.5, [1]):
        with pytest.raises(ValueError):
            progress.settings(None, interval)
    assert progress.settings(None, "30") == (None, 30)
    assert progress.settings(None, 5) == (None, 5)


def test_automatic_progress_needs_a_terminal_or_verbosity():
    assert progress.wanted(None, stdout_tty=True, verbosity=0)
    assert progress.wanted(None, stdout_tty=False, verbosity=1)
    assert not progress.wanted(None, stdout_tty=False, verbosity=0)
    assert progress.wanted(True, stdout_tty=False, verbosity=0)
    assert not progress.wanted(False, stdout_tty=True, verbosity=4)


def test_the_terminal_is_the_parents_stdout(tmp_path):
    # This process's stdout under pytest is a pipe or a file, not a terminal; a pid that does not exist is none.
    assert progress.stdout_is_tty(os.getpid()) == os.isatty(1)
    assert progress.stdout_is_tty(2 ** 22 + 7) is False


def test_the_relay_emits_complete_lines_and_the_rest_after_stop(tmp_path):
    path = tmp_path / "p"
    path.write_text("")
    seen, stop = [], threading.Event()
    thread = threading.Thread(target=progress.relay, args=(str(path), seen.append, stop, 0.01))
    thread.start()
    with open(str(path), "a") as handle:
        handle.write("10s: 0/2 ready\n20s: 1/2")
        handle.flush()
        while not seen:
            stop.wait(0.01)
        handle.write(" ready\n")
    stop.set()
    thread.join(5)
    assert seen == ["10s: 0/2 ready", "20s: 1/2 ready"]


def action(task_vars_verbosity=0, transport="local", become=False, async_val=0, no_log=False):
    plugin = progress.ProgressAction.__new__(progress.ProgressAction)
    plugin._connection = mock.Mock(transport=transport)
    plugin._play_context = mock.Mock(become=become, no_log=False)
    plugin._task = mock.Mock(async_val=async_val, no_log=no_log)
    plugin._templar = mock.Mock(template=lambda value: {"{{ on }}": "true"}.get(value, value))
    return plugin


def module_run(lines, result):
    """The normal action's run: the module process sees the environment, writes its lines, returns result."""
    seen = {}

    def run(self, tmp=None, task_vars=None):
        seen["env"] = (os.environ.get(PROGRESS_FILE_ENV), os.environ.get(PROGRESS_INTERVAL_ENV))
        if seen["env"][0]:
            with open(seen["env"][0], "a") as handle:
                handle.write("".join(line + "\n" for line in lines))
        return dict(result)
    return run, seen


def run_action(plugin, task_vars, tty=False, verbosity=0):
    shown = []
    result = {"changed": False, "resources": [{"name": "w", "ready": True}]}
    run, seen = module_run(["10s: 0/1 ready, slowest Widget ns/w: Ready=False Provisioning"], result)
    with mock.patch.object(progress.InProcessAction, "run", run), \
            mock.patch.object(progress, "stdout_is_tty", lambda: tty), \
            mock.patch.object(progress.display, "verbosity", verbosity), \
            mock.patch.object(progress.display, "display", lambda msg, **kw: shown.append((msg, kw))):
        got = plugin.run(task_vars=dict(task_vars, inventory_hostname="management-cluster"))
    return got, shown, seen, result


def test_asked_progress_is_relayed_to_stderr_and_the_result_is_the_modules():
    before = dict(os.environ)
    got, shown, seen, result = run_action(action(), {"cobaltcore_progress": "{{ on }}",
                                                     "cobaltcore_progress_interval": 3})
    assert got == result
    assert shown == [("[management-cluster] 10s: 0/1 ready, slowest Widget ns/w: Ready=False Provisioning",
                      {"stderr": True})]
    path, interval = seen["env"]
    assert interval == "3" and not os.path.exists(path)
    assert dict(os.environ) == before


@pytest.mark.parametrize("task_vars, tty, verbosity, plugin", [
    ({}, False, 0, action()),                                       # not asked, no terminal, no -v
    ({"cobaltcore_progress": False}, True, 3, action()),            # turned off
    ({"cobaltcore_progress": True}, False, 0, action(transport="ssh")),  # the module runs elsewhere
    ({"cobaltcore_progress": True}, False, 0, action(become=True)),
    ({"cobaltcore_progress": True}, False, 0, action(async_val=60)),
    ({"cobaltcore_progress": True}, False, 0, action(no_log=True)),
])
def test_no_progress_runs_the_module_untouched(task_vars, tty, verbosity, plugin):
    got, shown, seen, result = run_action(plugin, task_vars, tty, verbosity)
    assert got == result and shown == [] and seen["env"] == (None, None)


@pytest.mark.parametrize("tty, verbosity", [(True, 0), (False, 1)])
def test_automatic_progress_on_a_terminal_or_with_verbosity(tty, verbosity):
    got, shown, seen, result = run_action(action(), {}, tty, verbosity)
    assert got == result and len(shown) == 1 and seen["env"][1] == "10"


def test_bad_settings_fail_before_the_module_runs():
    got, shown, seen, result = run_action(action(), {"cobaltcore_progress": "loud"})
    assert got["failed"] and "env" not in seen
    assert got["msg"] == ("invalid progress settings, nothing was changed: cobaltcore_progress must be true or false "
                          "(or unset: automatic), got 'loud'")


def test_every_module_that_waits_has_the_progress_action_and_hands_its_reporter_on():
    modules = os.path.join(os.path.dirname(progress.__file__), "..", "modules")
    waiting = []
    for filename in sorted(name for name in os.listdir(modules) if name.endswith(".py")):
        with open(os.path.join(modules, filename)) as handle:
            source = handle.read()
        if any(word in source for word in ("Waiter(", "poll(", ".await_")):
            waiting.append(filename[:-3])
            assert "self.progress" in source, filename
    assert sorted(WAITING_MODULES) == waiting
    for name in waiting:
        plugin = importlib.import_module("ansible_collections.c5c3.cobaltcore.plugins.action.%s" % name)
        assert issubclass(plugin.ActionModule, progress.ProgressAction)
