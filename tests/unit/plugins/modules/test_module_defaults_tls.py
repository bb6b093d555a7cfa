# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""No TLS option reaches a client it was not meant for, through module_defaults of either group or direct
options, in either direction. Every module runs through ansible-playbook against TLS servers of a test CA
that count the requests they answer: a server the client must not trust answers none."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json
import os
import ssl
import subprocess
import sys

import pytest
import yaml

from conftest import REPO, _ROOT
from module_harness import KEYSTONE_MODULES
from test_module_kubeconfig_text import KUBE_ARGS, SECOND_KUBECONFIG
from tls_servers import API, CA

KEYSTONE_ARGS = dict((m.__name__.rsplit(".", 1)[-1], args) for m, args in KEYSTONE_MODULES.items())


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    """(CA file, servers by name): one TLS server per module and direction, certificates of the test CA."""
    directory = tmp_path_factory.mktemp("tls")
    ca = CA("module-defaults-ca")
    cert, key = ca.issue("server", dns=["localhost"], ips=["127.0.0.1"])
    for name, text in (("ca.crt", ca.pem), ("server.crt", cert), ("server.key", key)):
        (directory / name).write_text(text)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(str(directory / "server.crt"), str(directory / "server.key"))
    started = {}
    for direction in ("kube", "keystone"):
        for name in sorted(KUBE_ARGS) + sorted(KEYSTONE_ARGS):
            for role in ("kube", "keystone"):
                started["%s/%s/%s" % (direction, name, role)] = API(tls=context)
    yield str(directory / "ca.crt"), started, directory
    for server in started.values():
        server.stop()


def _kubeconfig(directory, server, insecure=False):
    """A kubeconfig file for the server without its CA: only a TLS option from elsewhere could make it trusted (or,
    insecure, one that trusts any certificate: a second cluster's, which no TLS option of the module is for)."""
    path = directory / ("kubeconfig-%d.yaml" % server.server.server_address[1])
    cluster = dict({"server": server.url}, **({"insecure-skip-tls-verify": True} if insecure else {}))
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "c", "cluster": cluster}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}]}))
    return str(path)


def _task(direction, name, servers, directory, **extra):
    kube, keystone = servers["%s/%s/kube" % (direction, name)], servers["%s/%s/keystone" % (direction, name)]
    kubeconfig = _kubeconfig(directory, kube)
    if name in KEYSTONE_ARGS:
        args = dict(KEYSTONE_ARGS[name], connect_retries=1, kubeconfig=kubeconfig)
        if direction == "kube":
            # Keystone first (auth): Kubernetes' TLS settings must not make the untrusted Keystone trusted.
            args["auth"] = {"auth_url": keystone.url + "/v3", "username": "admin", "password": "p",
                            "project_name": "admin", "user_domain_name": "Default", "project_domain_name": "Default"}
        else:
            # The Kubernetes client first (secret_auth reads its Secret): Keystone's must not reach it.
            args["secret_auth"] = {"auth_url": keystone.url + "/v3", "secret_namespace": "openstack",
                                   "secret_name": "admin-pw"}
    else:
        args = dict(KUBE_ARGS[name], kubeconfig=kubeconfig)
        if name in SECOND_KUBECONFIG:
            # The second cluster at the server of the other role: its requests are not the module's connection's.
            args[SECOND_KUBECONFIG[name]] = _kubeconfig(directory, keystone, insecure=True)
    args.update(extra)
    return {"name": "%s %s" % (direction, name), "c5c3.cobaltcore.%s" % name: args, "ignore_errors": True,
            "register": "result"}


def _record(direction, name):
    return {"name": "record %s %s" % (direction, name), "ansible.builtin.set_fact": {
        "results": "{{ results | combine({'%s/%s': result.msg | default('')}) }}" % (direction, name)}}


def test_tls_options_reach_only_their_own_client(servers, tmp_path):
    ca_file, started, directory = servers
    names = sorted(KUBE_ARGS) + sorted(KEYSTONE_ARGS)
    kube_tasks, keystone_tasks = [], []
    for name in names:
        kube_tasks += [_task("kube", name, started, directory), _record("kube", name)]
        # Keystone's TLS options given directly too: a Keystone module's validate_certs and ca_cert are Keystone's.
        direct = {"validate_certs": False, "ca_cert": ca_file} if name in KEYSTONE_ARGS else {}
        keystone_tasks += [_task("keystone", name, started, directory, **direct), _record("keystone", name)]
    common = {"hosts": "localhost", "connection": "local", "gather_facts": False, "vars": {"results": {}}}
    playbook = [
        # Kubernetes' TLS settings, as a lab's play sets them, in both groups that configure Kubernetes.
        dict(common, name="Kubernetes TLS settings", tasks=kube_tasks, module_defaults={
            "group/kubernetes.core.k8s": {"validate_certs": False},
            "group/c5c3.cobaltcore.cobaltcore": {"ca_cert": ca_file}}),
        # Keystone's, in the Keystone modules' group.
        dict(common, name="Keystone TLS settings", tasks=keystone_tasks + [
            {"name": "write the results", "ansible.builtin.copy": {
                "content": "{{ hostvars.localhost.results_kube | combine(results) | to_json }}",
                "dest": str(tmp_path / "results.json"), "mode": "0600"}}],
             module_defaults={"group/c5c3.cobaltcore.keystone": {"validate_certs": False, "ca_cert": ca_file}}),
    ]
    # The first play's results survive into the second as a fact of its own.
    kube_tasks.append({"name": "keep the results", "ansible.builtin.set_fact": {"results_kube": "{{ results }}"}})
    (tmp_path / "play.yml").write_text(yaml.safe_dump(playbook, sort_keys=False))
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=_ROOT, ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"),
               ANSIBLE_PYTHON_INTERPRETER=sys.executable, ANSIBLE_NOCOLOR="1")
    for variable in [v for v in env if v.startswith(("K8S_AUTH_", "OS_", "KUBECONFIG"))]:
        del env[variable]
    run = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", "localhost,",
                          str(tmp_path / "play.yml")], cwd=str(tmp_path), env=env, capture_output=True, text=True,
                         timeout=600, check=False)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    messages = json.loads((tmp_path / "results.json").read_text())
    counts = dict((key, server.count()) for key, server in started.items())
    wrong = []
    for name in names:
        if name in KEYSTONE_ARGS:
            # Kubernetes' settings never reach Keystone: the untrusted Keystone answered nothing.
            if counts["kube/%s/keystone" % name]:
                wrong.append("%s: Kubernetes' module_defaults reached Keystone (%d requests)"
                             % (name, counts["kube/%s/keystone" % name]))
            # Keystone's (group and direct options) never reach the Kubernetes client: it refused the certificate.
            message = messages["keystone/%s" % name]
            if counts["keystone/%s/kube" % name] or "CERTIFICATE_VERIFY_FAILED" not in message:
                wrong.append("%s: Keystone's TLS options reached the Kubernetes client (%d requests): %s"
                             % (name, counts["keystone/%s/kube" % name], message))
        else:
            # The Kubernetes groups do configure the Kubernetes modules (the test's own check).
            if not counts["kube/%s/kube" % name]:
                wrong.append("%s: Kubernetes' module_defaults did not reach it: %s" % (name, messages["kube/%s" % name]))
            # Keystone's group configures no Kubernetes module.
            if counts["keystone/%s/kube" % name]:
                wrong.append("%s: the Keystone group's TLS options reached it (%d requests)"
                             % (name, counts["keystone/%s/kube" % name]))
    assert not wrong, "\n".join(wrong)
