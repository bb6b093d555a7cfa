# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection's modules run on the controller without a new interpreter when the task runs there.

Every host of a region is a Kubernetes cluster driven from the controller (connection local). Run as
usual, each module task builds an AnsiballZ zip, writes it to a temporary directory and starts a new
Python that imports ansible.module_utils.basic before the module does anything. Here, when the task runs
on the controller with the controller's own interpreter, the action forks its worker process instead;
the child runs the module's own code as AnsiballZ would run it (the arguments Ansible would send, the
module's `main()`, its stdout and stderr and exit status collected), and the worker reads
the result with Ansible's own parser. Arguments, check mode, diff, no_log, warnings and the task's
environment reach the module exactly as they would reach a module process; the arguments travel in
memory only.

Anything else runs the module as usual (ansible.builtin.normal): another connection (a delegate_to a
remote host), become, async, another Python interpreter than the controller's, or the variable
``cobaltcore_in_process`` set to false (its default: the environment variable ``COBALTCORE_IN_PROCESS``, else true).
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import io
import json
import os
import signal
import sys
import tempfile
import threading
import traceback

from ansible.module_utils.common.json import Direction, get_module_encoder
from ansible.module_utils.parsing.convert_bool import boolean
from ansible.plugins.action.normal import ActionModule as NormalAction
from ansible.vars.clean import remove_internal_keys

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.drift import DRIFT_ENV
from ansible_collections.c5c3.cobaltcore.plugins.plugin_utils import drift

SWITCH = "cobaltcore_in_process"
SWITCH_ENV = "COBALTCORE_IN_PROCESS"
# The serialization profile AnsiballZ uses for a Python module that declares none.
PROFILE = "legacy"


def python_module_name(resolved_name):
    """The Python module of a module plugin's FQCN (c5c3.cobaltcore.wait -> ansible_collections....modules.wait)."""
    namespace, collection, name = resolved_name.split(".", 2)
    return "ansible_collections.%s.%s.plugins.modules.%s" % (namespace, collection, name)


def _read_all(fd):
    chunks = []
    while True:
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(fd)
    return b"".join(chunks)


def _child(module, payload, environment, out_w, err_w):
    """In the forked child: the module as its own process would run it. Never returns."""
    code = 1
    try:
        # A module process starts with Python's own handlers, not the worker's (which signals its process group).
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        os.dup2(out_w, 1)
        os.dup2(err_w, 2)
        # The worker's sys.stdout is not its file descriptor 1: the module's print() goes to the pipes.
        sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8", errors="surrogateescape")
        sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), encoding="utf-8", errors="backslashreplace")
        os.environ.update(environment)
        from ansible.module_utils import _internal, basic
        # The module's side of module_utils (results, warnings), as in a module process.
        _internal.is_controller = False
        basic._ANSIBLE_ARGS = payload
        basic._ANSIBLE_PROFILE = PROFILE
        module.main()
        # A module prints its result and exits; reaching here is a module error.
        sys.stderr.write("module %s did not exit with a result\n" % module.__name__)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:  # everything a module process would print as its traceback
        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def run_forked(module, payload, environment):
    """{rc, stdout, stderr} of the module run in a forked child of this worker process."""
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        os.close(out_r)
        os.close(err_r)
        _child(module, payload, environment, out_w, err_w)
    os.close(out_w)
    os.close(err_w)
    # stderr is read on a thread: a module that fills one pipe while the other is unread would block.
    err = {}
    reader = threading.Thread(target=lambda: err.update(data=_read_all(err_r)))
    reader.start()
    out = _read_all(out_r)
    reader.join()
    unused, status = os.waitpid(pid, 0)
    rc = os.waitstatus_to_exitcode(status)
    return {"rc": rc, "stdout": out.decode("utf-8", "surrogateescape"),
            "stderr": err.get("data", b"").decode("utf-8", "surrogateescape")}


class InProcessAction(NormalAction):
    """ansible.builtin.normal, with the module run in a fork of the worker when the task runs on the controller.

    A subclass names its module's Python module in ``module``, imported where the action plugin is: Ansible's
    strategy loads each task's action plugin in ansible-playbook's own process, so the module and its
    module_utils are imported once per run and every worker forked after that finds them imported.
    """

    module = None

    def run(self, tmp=None, task_vars=None):
        """The module's result; under drift.yml (plugin_utils/drift.py) with its objects' drift asked for and the
        task's records kept."""
        task_vars = task_vars if task_vars is not None else {}
        directory = self._template_var(task_vars, drift.DRIFT_DIR_VAR)
        if not directory:
            return super(InProcessAction, self).run(tmp, task_vars)
        handle, path = tempfile.mkstemp(prefix="cobaltcore-drift-", dir=directory)
        os.close(handle)
        saved = os.environ.get(DRIFT_ENV)
        os.environ[DRIFT_ENV] = path  # the module, forked or started by the local connection, inherits it
        try:
            result = super(InProcessAction, self).run(tmp, task_vars)
            found = drift.read_found(path)
        finally:
            if saved is None:
                os.environ.pop(DRIFT_ENV, None)
            else:
                os.environ[DRIFT_ENV] = saved
            os.remove(path)
        host = task_vars.get("inventory_hostname") or "localhost"
        clusters = dict((option, self._cluster_of(option, host, task_vars)) for option in drift.options_of(found))
        for record in drift.task_records(self._task.get_name(), host, clusters, result, found,
                                         self._task.no_log or self._play_context.no_log):
            drift.append(directory, host, record)
        return result

    def _cluster_of(self, option, host, task_vars):
        """The inventory host whose cluster the module's kubeconfig option names (plugin_utils/drift.py)."""
        kubeconfig = self._task.args.get(option)
        own = self._template_var(task_vars, "cobaltcore_kubeconfig")
        if kubeconfig is None or kubeconfig == own:
            return host
        hostvars = task_vars.get("hostvars") or {}
        return drift.cluster_of(kubeconfig, host, dict((name, hostvars[name].get("cobaltcore_kubeconfig"))
                                                       for name in hostvars))

    def _template_var(self, task_vars, name, default=None):
        """A variable's value, templated when it is a template (task_vars hold them as written)."""
        value = task_vars.get(name, default)
        if isinstance(value, str) and ("{{" in value or "{%" in value):
            value = self._templar.template(value)
        return value

    def _on_controller(self):
        """Whether the module would run on the controller itself: the local connection, no become, not async."""
        return self._connection.transport == "local" and not self._play_context.become and not self._task.async_val

    def _in_process(self, task_vars, wrap_async):
        if not boolean(self._template_var(task_vars, SWITCH, os.environ.get(SWITCH_ENV) or True), strict=False):
            return False
        if wrap_async or not self._on_controller():
            return False
        interpreter = self._template_var(task_vars, "ansible_python_interpreter")
        # Only the controller's own Python: another one may have other packages (openstacksdk, PyYAML). Paths are
        # compared unresolved: a venv's python links to the system's, whose packages are not the venv's.
        return bool(interpreter) and os.path.abspath(os.path.expanduser(str(interpreter))) == os.path.abspath(sys.executable)

    def _runs_in_process(self, module_name, task_vars, wrap_async):
        if self.module is None or not self._in_process(task_vars, wrap_async):
            return False
        resolved = self._shared_loader_obj.module_loader.find_plugin_with_context(
            module_name, collection_list=self._task.collections)
        return resolved.resolved and python_module_name(resolved.resolved_fqcn) == self.module.__name__

    def _execute_module(self, module_name=None, module_args=None, tmp=None, task_vars=None, persist_files=False,
                        delete_remote_tmp=None, wrap_async=False, ignore_unknown_opts=False):
        task_vars = task_vars if task_vars is not None else {}
        module_name = module_name or self._task.action
        if not self._runs_in_process(module_name, task_vars, wrap_async):
            return super(InProcessAction, self)._execute_module(
                module_name=module_name, module_args=module_args, task_vars=task_vars, wrap_async=wrap_async,
                ignore_unknown_opts=ignore_unknown_opts)
        module_args = dict(self._task.args if module_args is None else module_args)
        self._update_module_args(module_name, module_args, task_vars, ignore_unknown_opts=ignore_unknown_opts)
        environment = {}
        self._compute_environment_string(environment)
        encoder = get_module_encoder(PROFILE, Direction.CONTROLLER_TO_MODULE)
        payload = json.dumps({"ANSIBLE_MODULE_ARGS": module_args}, cls=encoder).encode("utf-8")
        environment = dict((str(key), str(value)) for key, value in environment.items())
        res = run_forked(self.module, payload, environment)
        self._used_interpreter = sys.executable
        data = self._parse_returned_data(res, PROFILE)
        data.pop("_ansible_suppress_tmpdir_delete", None)
        remove_internal_keys(data)
        for stream in ("stdout", "stderr"):
            if stream in data and stream + "_lines" not in data:
                data[stream + "_lines"] = (data.get(stream) or "").splitlines()
        return data
