# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The action plugins of the modules that wait: the module runs as every module does (in_process.py), and its
progress is relayed.

When progress is on, the module gets a file in an environment variable (common/progress.py); it
appends a line there at most every cobaltcore_progress_interval seconds while it waits, and a
thread of this action plugin shows each line with Ansible's Display on stderr (stdout stays the
stdout callback's, e.g. pure JSON). The module's arguments and result are untouched.

Progress is on when cobaltcore_progress is true; with it unset, when ansible-playbook's stdout is a
terminal or -v is given; never when it is false. It needs the module to run on the controller
(connection local, no become, not async) and is off for no_log tasks.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os
import tempfile
import threading

from ansible.module_utils.parsing.convert_bool import BOOLEANS_FALSE, BOOLEANS_TRUE
from ansible.utils.display import Display

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.progress import (
    DEFAULT_INTERVAL, PROGRESS_FILE_ENV, PROGRESS_INTERVAL_ENV)
from ansible_collections.c5c3.cobaltcore.plugins.plugin_utils.in_process import InProcessAction

SWITCH = "cobaltcore_progress"
INTERVAL = "cobaltcore_progress_interval"
# How often the relay looks for new lines (the module writes at most one per interval).
RELAY_PERIOD = 0.5

display = Display()


def settings(switch, interval):
    """(switch: True, False or None for automatic, interval seconds) from the two variables' values.

    ValueError naming every bad variable.
    """
    problems = []
    if switch is None or switch == "":
        on = None
    elif isinstance(switch, bool):
        on = switch
    elif isinstance(switch, (str, int)) and str(switch).strip().lower() in BOOLEANS_TRUE:
        on = True
    elif isinstance(switch, (str, int)) and str(switch).strip().lower() in BOOLEANS_FALSE:
        on = False
    else:
        on = None
        problems.append("%s must be true or false (or unset: automatic), got %r" % (SWITCH, switch))
    seconds = DEFAULT_INTERVAL
    if interval is not None and interval != "":
        try:
            if isinstance(interval, bool):
                raise ValueError
            seconds = int(str(interval).strip())
            if seconds < 1:
                raise ValueError
        except ValueError:
            problems.append("%s must be a whole number of seconds, at least 1, got %r" % (INTERVAL, interval))
    if problems:
        raise ValueError("; ".join(problems))
    return on, seconds


def wanted(switch, stdout_tty, verbosity):
    """Whether to show progress: as asked, else on a terminal or with -v."""
    if switch is not None:
        return switch
    return bool(stdout_tty) or verbosity >= 1


def stdout_is_tty(pid=None):
    """Whether ansible-playbook's stdout is a terminal.

    A task runs in a worker process whose stdio Ansible detached, so this looks at its parent's
    (the ansible-playbook process) standard output. False where /proc is not there.
    """
    try:
        target = os.readlink("/proc/%d/fd/1" % (pid or os.getppid()))
    except OSError:
        return False
    return target.startswith(("/dev/pts/", "/dev/tty")) or target == "/dev/console"


def relay(path, emit, stop, period=RELAY_PERIOD):
    """emit(line) for each complete line appended to path, until stop is set (then once more)."""
    pending = ""
    with open(path) as handle:
        while True:
            stopped = stop.wait(period)
            pending += handle.read()
            lines = pending.split("\n")
            pending = lines.pop()
            for line in lines:
                if line:
                    emit(line)
            if stopped:
                return


class ProgressAction(InProcessAction):
    """The module's action (plugin_utils/in_process.py), with its progress relayed while it runs."""

    def _can_relay(self):
        return self._on_controller() and not self._task.no_log and not self._play_context.no_log

    def run(self, tmp=None, task_vars=None):
        task_vars = task_vars or {}
        try:
            switch, interval = settings(self._template_var(task_vars, SWITCH), self._template_var(task_vars, INTERVAL))
        except ValueError as error:
            return {"failed": True, "msg": "invalid progress settings, nothing was changed: %s" % error}
        if not self._can_relay() or not wanted(switch, stdout_is_tty(), display.verbosity):
            return super(ProgressAction, self).run(tmp, task_vars)

        host = task_vars.get("inventory_hostname") or "localhost"
        handle, path = tempfile.mkstemp(prefix="cobaltcore-progress-")
        os.close(handle)
        stop = threading.Event()
        thread = threading.Thread(target=relay, args=(path, lambda line: display.display(
            "[%s] %s" % (host, line), stderr=True), stop))
        thread.daemon = True
        # The worker process runs this one task: the module, started by the local connection, inherits these.
        saved = dict((key, os.environ.get(key)) for key in (PROGRESS_FILE_ENV, PROGRESS_INTERVAL_ENV))
        os.environ[PROGRESS_FILE_ENV] = path
        os.environ[PROGRESS_INTERVAL_ENV] = str(interval)
        thread.start()
        try:
            return super(ProgressAction, self).run(tmp, task_vars)
        finally:
            stop.set()
            thread.join(5)
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
            try:
                os.remove(path)
            except OSError:
                pass
