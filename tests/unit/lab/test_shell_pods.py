# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab's player of shell pods (standins/shell_pods.py): what it runs and how, without a cluster."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os
import sys

from conftest import REPO

sys.path.insert(0, os.path.join(REPO, "lab"))
from regionlab import kubelets  # noqa: E402  pylint: disable=wrong-import-position
from regionlab.standins import shell_pods  # noqa: E402  pylint: disable=wrong-import-position


def pod(script, env=None, volume=None, command=None):
    return {"metadata": {"name": "p", "namespace": "ovn-system"}, "spec": {
        "containers": [{"name": "c", "image": "i", "command": command or ["/bin/sh", "-ec", script],
                        "env": [{"name": k, "value": v} for k, v in (env or {}).items()],
                        "volumeMounts": [{"name": "data", "mountPath": "/backups"}]}],
        "volumes": [dict(volume or {"nfs": {"server": "nfs.lab.invalid", "path": "/ovn"}}, name="data")]}}


def test_the_script_runs_with_service_remotes_and_mounts_resolved(monkeypatch, tmp_path):
    monkeypatch.setattr(shell_pods, "VOLUMES", tmp_path)
    services = {("ovn-nb", "ovn-system"): "tcp:127.20.0.11:6641,tcp:127.20.0.12:6641"}
    code, message = shell_pods.run(pod('mkdir -p "$DIR/x"; echo "$REMOTE" > "$DIR/x/remote"; echo done', {
        "DIR": "/backups", "REMOTE": "tcp:ovn-nb.ovn-system.svc.cluster.local:6641"}), services)
    assert (code, message) == (0, "done")
    assert (tmp_path / "nfs/nfs.lab.invalid/ovn/x/remote").read_text() == "tcp:127.20.0.11:6641,tcp:127.20.0.12:6641\n"
    # An unknown Service stays as it is (its name resolves nowhere here, as in a cluster without it).
    assert shell_pods.resolve_remotes("tcp:other.ns.svc:1", services) == "tcp:other.ns.svc:1"


def test_the_downward_apis_metadata_fields_are_resolved_as_the_kubelet_does(monkeypatch, tmp_path):
    monkeypatch.setattr(shell_pods, "VOLUMES", tmp_path)
    played = pod('echo "$JOB $NS $NONE."')
    played["metadata"]["labels"] = {"batch.kubernetes.io/job-name": "ovn-backup-scheduled-42"}
    played["spec"]["containers"][0]["env"] = [
        {"name": "JOB", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['batch.kubernetes.io/job-name']"}}},
        {"name": "NS", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
        {"name": "NONE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.annotations['x']"}}}]
    assert shell_pods.run(played, {}) == (0, "ovn-backup-scheduled-42 ovn-system .")
    played["spec"]["containers"][0]["env"] = [{"name": "IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}]
    code, message = shell_pods.run(played, {})
    assert code == 1 and message.startswith("the lab plays only literal env values, metadata fieldRefs and Secret and "
                                            "ConfigMap keys (IP has ")


def test_secret_and_config_map_keys_are_read_from_the_pods_cluster(monkeypatch, tmp_path):
    monkeypatch.setattr(shell_pods, "VOLUMES", tmp_path)
    objects = {("secrets", "ovn-system", "mon"): {"data": {"key": "czNjcjN0"}},
               ("configmaps", "ovn-system", "endpoints"): {"data": {"data": "a=127.30.1.10:6789"}}}
    played = pod('echo "$KEY $MONS [$OPTIONAL]"')
    played["spec"]["containers"][0]["env"] = [
        {"name": "KEY", "valueFrom": {"secretKeyRef": {"name": "mon", "key": "key"}}},
        {"name": "MONS", "valueFrom": {"configMapKeyRef": {"name": "endpoints", "key": "data"}}},
        {"name": "OPTIONAL", "valueFrom": {"secretKeyRef": {"name": "gone", "key": "k", "optional": True}}}]

    def read(plural, namespace, name):
        return objects.get((plural, namespace, name))

    assert shell_pods.run(played, {}, read) == (0, "s3cr3t a=127.30.1.10:6789 []")
    # A missing key the kubelet refuses (CreateContainerConfigError): the container does not start.
    played["spec"]["containers"][0]["env"] = [{"name": "K", "valueFrom": {"secretKeyRef": {"name": "mon", "key": "x"}}}]
    assert shell_pods.run(played, {}, read) == (1, "couldn't find key x in Secret ovn-system/mon")


def test_a_failing_script_an_unmountable_volume_and_a_non_shell_command(monkeypatch, tmp_path):
    monkeypatch.setattr(shell_pods, "VOLUMES", tmp_path)
    assert shell_pods.run(pod('echo "no such backup" >&2; exit 3'), {}) == (3, "no such backup")
    # The kubelet's FallbackToLogsOnError: the log's last 80 lines, at most 2048 bytes.
    code, message = shell_pods.run(pod('for i in $(seq 1 100); do echo "line $i" >&2; done; exit 1'), {})
    assert (code, message.splitlines()[0], message.splitlines()[-1]) == (1, "line 21", "line 100")
    assert shell_pods.run(pod("true", volume={"configMap": {"name": "x"}}), {}) == (
        1, "the lab cannot mount volume data")
    assert shell_pods.run(pod("", command=["ovsdb-client", "backup"]), {})[0] == 127
    assert shell_pods.volume_dir("ns", {"persistentVolumeClaim": {"claimName": "c"}}) == tmp_path / "pvc/ns/c"


def test_the_exit_patch():
    assert kubelets.exit_patch(0, "ok") == {"metadata": {"annotations": {kubelets.EXIT_CODE: "0"}}}
    failed = kubelets.exit_patch(2, 'no "backup": here')["metadata"]
    assert failed["labels"] == {kubelets.KWOK_FAILED: "true"}
    assert failed["annotations"][kubelets.KWOK_FAILED + "/message"] == "no  backup  here"
