#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r"""
module: korc_credentials
short_description: Mint K-ORC's application credential in Keystone and write its clouds.yaml Secret
version_added: 0.3.0
description:
  - Solves the first link of K-ORC's credential chain (seed 003, "Bootstrap Resources") - K-ORC needs a
    C(clouds.yaml) before it can manage anything in Keystone, so this module creates it.
  - Authenticates with the admin cloud (the user and project C(keystone-manage bootstrap) created),
    creates a restricted application credential (C(unrestricted=false), only O(roles)) for that user and
    project, and writes the Secret O(secret_name) (key C(clouds.yaml), with
    C(auth_type=v3applicationcredential)) in the OpenStack cluster's namespace, where K-ORC objects reference it
    with C(cloudCredentialsRef).
  - A re-run does not mint a new credential while the one in the Secret still issues a token with the
    wanted roles and project; it only rewrites the Secret when other settings (URL, region, interface,
    cloud name) changed. A credential that no longer issues a token is replaced and the old one deleted.
  - Safe when two runs meet (a role run on its own beside another run) - the Secret is created only when absent and
    replaced only over the version read; a run that loses deletes the credential it minted (never in the Secret) and
    takes the winner's. What the Secret names is never deleted. A replaced credential that still issues a token
    (roles or project changed) may be in K-ORC's use - it is deleted only once K-ORC's Secret has held the new one for
    O(replaced_grace) seconds, on a later run (RV(pending_delete)); after a rotation (O(version)) in the same run.
    K-ORC reads the Secret at the start of every reconcile, so only reconciles already under way still use the old one.
  - Keystone being unreachable is retried with backoff and then fails naming the endpoint; it never
    causes a replacement. Refused admin credentials fail at once.
  - The credential's secret and the C(clouds.yaml) never appear in results, diffs or C(-vvv) output.
author:
  - CobaltCore team (@c5c3)
extends_documentation_fragment:
  - openstack.cloud.openstack
  - c5c3.cobaltcore.keystone
  - c5c3.cobaltcore.kube_connection.keystone_modules
attributes:
  check_mode:
    description: Tests the existing credential and reports whether it would mint or rewrite; changes nothing.
    support: full
  diff_mode:
    description: Shows that the Secret changes, values redacted.
    support: full
options:
  namespace:
    description:
      - The OpenStack cluster's namespace on the control-plane cluster.
      - Required, here or per cluster in O(clusters[].params).
    type: str
  secret_name:
    description: The Secret K-ORC reads (C(cloudCredentialsRef.secretName)).
    type: str
    default: k-orc-clouds-yaml
  cloud_name:
    description: The cloud's name inside C(clouds.yaml) (C(cloudCredentialsRef.cloudName)).
    type: str
    default: openstack
  name:
    description:
      - The prefix of the application credential's name in Keystone (C(<name>-<UTC time>-<4 random hex digits>));
        C(k-orc-<namespace>)
        when omitted. Replaced credentials are found by their description, which names the namespace.
    type: str
  roles:
    description: The roles the credential carries (the admin user must hold them on its project).
    type: list
    elements: str
    default: [admin]
  auth_url:
    description: The Keystone URL K-ORC uses; the admin cloud's C(auth_url) when omitted.
    type: str
  region:
    description: The region K-ORC uses; the admin cloud's region when omitted.
    type: str
  endpoint_interface:
    description: The catalog interface K-ORC uses (C(interface) and C(endpoint_type) in its C(clouds.yaml)).
    type: str
    choices: [public, internal, admin]
    default: internal
  korc_ca_cert:
    description:
      - A PEM CA bundle written as key C(cacert) beside C(clouds.yaml) (K-ORC's CA key), for a Keystone behind a
        private CA. (O(ca_cert) is the CA this module itself uses.)
    type: str
  labels:
    description: Labels of the Secret.
    type: dict
  version:
    description:
      - The credential's version. A Secret whose annotation C(cobaltcore.c5c3.io/credential-version) (none is 0) names
        another version gets a new credential - a rotation - and the replaced one is deleted in the same run, once
        K-ORC's Secret has held the new one for O(replaced_grace) seconds (through OpenBao once synced, on a later
        run).
    type: int
    default: 0
  replaced_grace:
    description:
      - Seconds K-ORC's Secret holds the new credential before a replaced one that still issues a token is deleted.
        K-ORC reads the Secret at the start of every reconcile, so this covers the reconciles already under way.
    type: int
    default: 60
  synced_secret:
    description:
      - The Secret K-ORC actually reads when O(secret_name) only reaches it through OpenBao (PushSecret, then an
        ExternalSecret writing C(k-orc-clouds-yaml)). A replaced credential is deleted only once this Secret carries
        the current one, on this run or a later one; until then RV(pending_sync) is true.
    type: str
notes:
  - Keystone lets only the owner create application credentials and forbids a restricted credential to
    create more; K-ORC therefore creates service users' application credentials with those users' own
    credentials (see docs/keystone.md), not with this one.
  - In the OpenBao path of seed 003 the module writes the PushSecret's source (C(k-orc-app-credential)) and names
    the ExternalSecret's target in O(synced_secret); see docs/keystone.md.
"""

EXAMPLES = r"""
- name: K-ORC credentials for the region's OpenStack cluster
  c5c3.cobaltcore.korc_credentials:
    cloud: eu-de-1-admin
    kubeconfig: "{{ cobaltcore_kubeconfig }}"
    namespace: openstack
    auth_url: https://keystone.openstack.svc.cluster.local:5000/v3
    region: eu-de-1
  environment:
    OS_CLIENT_CONFIG_FILE: "{{ cobaltcore_keystone_clouds_yaml }}"
"""

RETURN = r"""
clusters:
  description:
    - With O(clusters), one entry per cluster in that order - C(name), C(changed), the results described here for
      that cluster and, for a cluster that failed, C(failed) and C(msg).
  returned: with O(clusters)
  type: list
  elements: dict
minted:
  description: Whether this run created a new application credential (or would, in check mode).
  returned: always
  type: bool
reason:
  description: Why the credential was minted or the Secret written, or C(valid) when nothing changed.
  returned: always
  type: str
  sample: "the credential in the Secret no longer issues a token (HTTP 401)"
application_credential_id:
  description: The ID of the credential in the Secret (not a secret); null in check mode before minting.
  returned: always
  type: str
deleted_application_credentials:
  description: IDs of replaced credentials (and of leftovers of interrupted runs) deleted from Keystone.
  returned: always
  type: list
  elements: str
auth_url:
  description: The Keystone URL written for K-ORC.
  returned: always
  type: str
admin_auth_url:
  description: The admin cloud's Keystone URL.
  returned: always
  type: str
region:
  description: The region written for K-ORC.
  returned: always
  type: str
secret:
  description: The Secret, C({name, namespace, result}) with result C(created), C(configured) or C(unchanged).
  returned: always
  type: dict
pending_sync:
  description: With O(synced_secret), true while that Secret does not carry the current credential yet.
  returned: always
  type: bool
pending_delete:
  description: The replaced credential that still issues a token, kept for K-ORC until a later run deletes it.
  returned: when a working credential was replaced
  type: str
"""

try:
    import yaml
except ImportError:  # pragma: no cover - PyYAML comes with Ansible
    yaml = None

import binascii
import os
import time

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common import timestamps
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.keystone.catalog import cloud
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import naming
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.secret_data import decoded
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.apply import normalize
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.client import FIELD_MANAGER
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.keystone.module import (
    KeystoneError, KeystoneModule)


WRITE_ATTEMPTS = 5
VERSION_ANNOTATION = "cobaltcore.c5c3.io/credential-version"


def credential_version(secret):
    """The version the Secret's credential was minted for (its annotation; none is 0)."""
    value = (((secret or {}).get("metadata") or {}).get("annotations") or {}).get(VERSION_ANNOTATION)
    return int(value) if value and str(value).isdigit() else 0


def held_for(live, now):
    """Seconds since this collection last wrote the Secret (managedFields), 0 when unknown."""
    return timestamps.seconds_since(timestamps.last_write(live, manager=FIELD_MANAGER), now) or 0


def clouds_yaml(cloud_name, auth_url, credential_id, secret, region, interface):
    return {"clouds": {cloud_name: cloud(
        {"auth_url": auth_url, "application_credential_id": credential_id, "application_credential_secret": secret},
        region, interface, auth_type="v3applicationcredential")}}


def stored_credential(secret, cloud_name):
    """(id, secret, parsed clouds.yaml) of the Secret, Nones when it holds none."""
    text = decoded(secret).get(naming.KORC_CLOUDS_KEY)
    if not text:
        return None, None, None
    try:
        parsed = yaml.safe_load(text)
        auth = parsed["clouds"][cloud_name]["auth"]
        return auth.get("application_credential_id"), auth.get("application_credential_secret"), parsed
    except Exception:  # anything unreadable is replaced
        return None, None, None


class KorcCredentialsModule(KeystoneModule):
    argument_spec = dict(
        namespace=dict(type="str"),
        secret_name=dict(type="str", default=naming.KORC_CLOUDS_SECRET),
        cloud_name=dict(type="str", default=naming.KORC_CLOUD_NAME),
        name=dict(type="str"),
        roles=dict(type="list", elements="str", default=["admin"]),
        auth_url=dict(type="str"),
        region=dict(type="str"),
        endpoint_interface=dict(type="str", default="internal", choices=["public", "internal", "admin"]),
        korc_ca_cert=dict(type="str"),
        labels=dict(type="dict"),
        synced_secret=dict(type="str", no_log=False),
        version=dict(type="int", default=0),
        replaced_grace=dict(type="int", default=60),
    )
    module_kwargs = dict(supports_check_mode=True)
    cluster_required = ("namespace",)

    def token_for(self, credential_id, secret, auth_url):
        """The AccessInfo the credential gets, None when Keystone refuses it; retries outages."""
        try:
            return self.credential_access(auth_url, credential_id, secret, "a token for the credential in the Secret")
        except KeystoneError as error:
            if error.details.get("status") in (401, 404):
                return None
            raise

    def judge(self, live, credential_id, secret, auth_url, project_id):
        """(reason to mint a new credential or None, whether the stored one still issues a token)."""
        if live is None:
            return "the Secret %s/%s does not exist" % (self.params["namespace"], self.params["secret_name"]), False
        if not credential_id or not secret:
            return "the Secret %s/%s holds no application credential for cloud %s" % (
                self.params["namespace"], self.params["secret_name"], self.params["cloud_name"]), False
        access = self.token_for(credential_id, secret, auth_url)
        if access is None:
            return "the credential in the Secret no longer issues a token (HTTP 401)", False
        if access.project_id != project_id:
            return "the credential in the Secret is scoped to project %s, not the admin cloud's %s" % (
                access.project_id, project_id), True
        if not set(self.params["roles"]) <= set(access.role_names or []):
            return "the credential in the Secret lacks roles %s" % ", ".join(
                sorted(set(self.params["roles"]) - set(access.role_names or []))), True
        if credential_version(live) != self.params["version"]:
            return "credential version %d is asked, the Secret holds version %d (a rotation)" % (
                self.params["version"], credential_version(live)), True
        return None, True

    def run(self):
        namespace = self.params["namespace"]
        cloud_name = self.params["cloud_name"]
        name = self.params["name"] or naming.korc_application_credential_name(namespace)
        self.authorize()
        admin_auth_url = self.auth_url
        auth_url = self.params["auth_url"] or admin_auth_url
        region = self.params["region"] or self.conn.config.get_region_name() or ""
        interface = self.params["endpoint_interface"]
        user_id, project_id = self.conn.current_user_id, self.conn.current_project_id
        self.results.update(minted=False, reason="valid", application_credential_id=None, pending_sync=False,
                            deleted_application_credentials=[], auth_url=auth_url, admin_auth_url=admin_auth_url,
                            region=region)
        # Another run (a role run on its own, a broken run lock) may switch the Secret between this run's read and
        # write: writes carry the read resourceVersion, and the loser drops the credential it minted (never in the
        # Secret, so nobody uses it) and reads again.
        dead = set()  # credentials read from the Secret that issue no token: nobody can use them
        for unused in range(WRITE_ATTEMPTS):
            live = self.read_secret(namespace, self.params["secret_name"])
            credential_id, secret, parsed = stored_credential(live, cloud_name)
            reason, works = self.judge(live, credential_id, secret, auth_url, project_id)
            replaced = credential_id if reason else None
            if replaced and not works:
                dead.add(replaced)
            if reason:
                self.results.update(minted=True, reason=reason, changed=True)
                if self.check_mode:
                    self.results["secret"] = {"name": self.params["secret_name"], "namespace": namespace,
                                              "result": "configured" if live else "created"}
                    return
                credential_id, secret = self.mint(user_id, name)
            self.hide(secret)
            desired = clouds_yaml(cloud_name, auth_url, credential_id, secret, region, interface)
            if not reason and parsed != desired:
                self.results["reason"] = "the Secret's settings changed (auth URL, region, interface or cloud name)"
            if self.write_secret(namespace, desired, live):
                break
            if reason:
                self.delete_credential(user_id, credential_id)
                self.results.update(minted=False, reason="another run replaced the credential at the same time")
        else:
            self.fail_with("the Secret %s/%s changed under every one of %d attempts to write it (another run keeps "
                           "replacing K-ORC's credential)" % (namespace, self.params["secret_name"], WRITE_ATTEMPTS))
        self.results["application_credential_id"] = credential_id
        if self.params["synced_secret"]:
            # Through OpenBao K-ORC sees the new credential only after ESO's next sync.
            synced = self.read_secret(namespace, self.params["synced_secret"])
            if stored_credential(synced, cloud_name)[0] != credential_id:
                self.results["pending_sync"] = True
                return
        elif not reason:
            for old in sorted(dead - set([credential_id])):
                self.results["changed"] = True
                self.delete_credential(user_id, old)
            # A replaced credential kept by an earlier run (pending_delete) goes once K-ORC's Secret has held this
            # one for replaced_grace seconds: K-ORC watches the Secret and reconciles with it well within that.
            if held_for(live, time.time()) < self.params["replaced_grace"]:
                return
            self.delete_replaced(user_id, set([credential_id]))
            return
        # Only once K-ORC's Secret holds the new one: the replaced credential and leftovers of interrupted runs
        # (their secrets are lost) go; through OpenBao possibly on a later run. A replaced credential that still
        # issues a token is one K-ORC may be using right now: kept until K-ORC's Secret has held the new one for
        # a while (pending_delete), so K-ORC never holds a credential that does not exist.
        keep = set([credential_id])
        if works and replaced and credential_version(live) != self.params["version"]:
            # A rotation: the old credential stops working in this run, once K-ORC had the grace to move.
            time.sleep(max(0, self.params["replaced_grace"]))
        elif works and replaced:
            keep.add(replaced)
            self.results["pending_delete"] = replaced
        self.delete_replaced(user_id, keep)

    def description(self):
        return "K-ORC credentials of namespace %s (c5c3.cobaltcore)" % self.params["namespace"]

    def mint(self, user_id, name):
        """A new restricted credential, named <name>-<UTC time>-<random> (names are unique per user, and two runs
        at once may mint in the same second)."""
        name = "%s-%s-%s" % (name, time.strftime("%Y%m%d%H%M%S", time.gmtime()), binascii.hexlify(os.urandom(2)).decode())
        created = self.keystone(lambda: self.conn.identity.create_application_credential(
            user=user_id, name=name, unrestricted=False, description=self.description(),
            roles=[{"name": role} for role in self.params["roles"]]),
            "creating application credential %s" % name)
        self.hide(created.secret)
        return created.id, created.secret

    def replaced(self, user_id, keep):
        identity = self.conn.identity
        return self.keystone(lambda: [c.id for c in identity.application_credentials(user=user_id)
                                      if c.description == self.description() and c.id not in keep],
                             "listing the admin user's application credentials")

    def delete_replaced(self, user_id, keep):
        candidates = self.replaced(user_id, keep)
        if not candidates:
            return
        # What the Secret names now is never deleted, whoever wrote it since.
        now = stored_credential(self.read_secret(self.params["namespace"], self.params["secret_name"]),
                                self.params["cloud_name"])[0]
        for credential_id in candidates:
            if credential_id == now:
                continue
            self.results["changed"] = True
            if not self.check_mode:
                self.delete_credential(user_id, credential_id)

    def delete_credential(self, user_id, credential_id):
        self.keystone(lambda: self.conn.identity.delete_application_credential(
            user_id, credential_id, ignore_missing=True), "deleting application credential %s" % credential_id)
        self.results["deleted_application_credentials"].append(credential_id)

    def write_secret(self, namespace, desired, live):
        """Write K-ORC's Secret as read (its resourceVersion, or create-only); False when another writer came first."""
        text = yaml.safe_dump(desired, default_flow_style=False, sort_keys=False)
        data = {naming.KORC_CLOUDS_KEY: text}
        if self.params["korc_ca_cert"]:
            data["cacert"] = self.params["korc_ca_cert"]
        labels = {naming.MANAGED_BY_LABEL: naming.MANAGED_BY}
        labels.update(self.params["labels"] or {})
        metadata = {"name": self.params["secret_name"], "namespace": namespace, "labels": labels}
        if self.params["version"]:
            metadata["annotations"] = {VERSION_ANNOTATION: str(self.params["version"])}
        manifest = {"apiVersion": "v1", "kind": "Secret", "type": "Opaque", "metadata": metadata, "stringData": data}
        self.hide_secret_values([manifest])
        objects = normalize([manifest])
        self.hide_secret_values(objects)
        written = self.write_as_read(objects[0], live)
        if written is None:
            return False
        self.results["secret"] = {"name": self.params["secret_name"], "namespace": namespace,
                                  "result": written["result"]}
        return True


def main():
    KorcCredentialsModule()()


if __name__ == "__main__":
    main()
