# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A waiting module with the action plugin's progress file: lines while it waits, masked, and the same result."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.progress import (
    PROGRESS_FILE_ENV, PROGRESS_INTERVAL_ENV)
from ansible_collections.c5c3.cobaltcore.plugins.modules import gardener_shoot, wait

from module_harness import GARDENER, TOKEN, run_module
from module_harness import kube  # noqa: F401  # pylint: disable=unused-import


def shoot(name, percent):
    return {"apiVersion": GARDENER, "kind": "Shoot",
            "metadata": {"name": name, "namespace": "garden-lab", "generation": 1},
            "spec": {"seedName": "seed"},
            "status": {"observedGeneration": 1, "lastOperation": {
                "type": "Create", "state": "Processing", "progress": percent,
                # A status text holding a no_log value (here the api_key) is masked as Ansible masks the result.
                "description": "Waiting for the kube-apiserver (token %s)" % TOKEN}}}


def without_elapsed(result):
    """The result but for the seconds waited and the request count (rounds in 2 s vary with the machine's load)."""
    return dict(result, objects=[dict(o, elapsed=None) for o in result["objects"]], requests=None,
                waited_seconds=None)


def test_the_wait_writes_throttled_masked_lines_and_returns_the_same_result(kube, monkeypatch, tmp_path):
    kube.add(shoot("a", 60))
    kube.add(shoot("b", 20))
    args = {"api_key": TOKEN, "host": "https://127.0.0.1:6443", "timeout": 2, "sleep": 1, "resources": [
        {"api_version": GARDENER, "kind": "Shoot", "name": n, "namespace": "garden-lab"} for n in ("a", "b")]}
    quiet, quiet_text = run_module(wait.main, args)

    path = tmp_path / "progress"
    monkeypatch.setenv(PROGRESS_FILE_ENV, str(path))
    monkeypatch.setenv(PROGRESS_INTERVAL_ENV, "1")
    told, told_text = run_module(wait.main, args)

    lines = path.read_text().splitlines()
    # A 2 s wait at most one line a second: one or two lines, the first after a second.
    assert 1 <= len(lines) <= 2
    assert lines[0].startswith("1s: 0/2 ready, slowest Shoot garden-lab/b: lastOperation Create Processing 20%: "
                               "Waiting for the kube-apiserver (token ********)")
    assert TOKEN not in path.read_text()
    assert quiet["failed"] and without_elapsed(told) == without_elapsed(quiet)
    assert TOKEN not in told_text and TOKEN not in quiet_text


def test_a_shoot_deletion_reports_its_delete_operation(kube, monkeypatch, tmp_path):
    deleting = shoot("x", 30)
    deleting["metadata"].update(namespace="garden-p", deletionTimestamp="2026-01-01T00:00:00Z",
                                annotations={"confirmation.gardener.cloud/deletion": "true"})
    deleting["status"]["lastOperation"].update(type="Delete", description="Deleting the worker nodes")
    kube.add(deleting)
    path = tmp_path / "progress"
    monkeypatch.setenv(PROGRESS_FILE_ENV, str(path))
    monkeypatch.setenv(PROGRESS_INTERVAL_ENV, "1")
    result, _text = run_module(gardener_shoot.main, {"namespace": "garden-p", "state": "absent", "wait_timeout": 2,
                                                     "wait_sleep": 1, "shoots": [{"name": "x"}, {"name": "y"}]})
    assert result["failed"] and result["msg"].startswith("1 Shoot(s) still present after 2s: x (")
    assert path.read_text().splitlines()[0] == (
        "1s: 0/1 gone, slowest Shoot garden-p/x: lastOperation Delete Processing 30%: Deleting the worker nodes")
