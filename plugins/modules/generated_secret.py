#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r"""
module: generated_secret
short_description: Ensure Secrets whose values are generated once and never shown
version_added: 0.3.0
description:
  - Ensures Kubernetes Secrets with random values (passwords, application credential secrets), generated
    only when the Secret lacks the key. A value that exists is never regenerated, and no key the Secret
    already holds is dropped, so a re-run writes nothing.
  - Generated values are letters and digits, safe in YAML, INI files, URLs and shells.
  - O(secrets[].values) are set as given (settings such as an ID or a URL);
    O(secrets[].templates) are rendered from the Secret's values, generated ones included, with
    C(${key}) references; a template given as a mapping is written as YAML (a C(clouds.yaml), say).
  - Values never appear in results, diffs, errors or C(-vvv) output; the module reads them from the
    Secret and writes them back only through the API server.
  - One API client for the whole batch; server-side apply under the field manager C(c5c3.cobaltcore).
  - Safe when two runs write the same Secret at once - an absent Secret is only created (never overwritten), an
    existing one only changed over the version read; on a conflict the module reads again and keeps the values
    the other run wrote, so a generated password never changes once it exists (a Keystone bootstrapped with it
    keeps working).
author:
  - CobaltCore team (@c5c3)
extends_documentation_fragment:
  - c5c3.cobaltcore.kube_connection
attributes:
  check_mode:
    description: Sends the writes as server-side dry runs; values generated in check mode are thrown away.
    support: full
  diff_mode:
    description: Shows which keys change, with every value redacted.
    support: full
options:
  secrets:
    description: The Secrets to ensure.
    type: list
    elements: dict
    required: true
    suboptions:
      name:
        description: The Secret's name.
        type: str
        required: true
      namespace:
        description: Its namespace; O(namespace) when omitted.
        type: str
      labels:
        description: Labels to set on the Secret.
        type: dict
      generate:
        description:
          - Keys whose values are generated when the Secret lacks them, each a key name or a mapping
            C({key, length}) (length at least 16, default 32).
        type: list
        elements: raw
      values:
        description:
          - Keys set to these string values (settings such as an ID or a URL).
          - Masked in the module's output like the Secret's other values, except strings that the Secret's name,
            namespace, labels or keys show anyway.
        type: dict
      values_from:
        description:
          - Keys copied from a field of another object, for example the C(status.id) K-ORC writes into an
            C(ApplicationCredential), or another Secret's C(data.<key>) (copied decoded, masked like the
            Secret's own values). Fails listing every object or field that is missing.
        type: list
        elements: dict
        suboptions:
          key:
            description: The Secret's key.
            type: str
            required: true
          api_version:
            description: The object's apiVersion.
            type: str
            required: true
          kind:
            description: The object's kind.
            type: str
            required: true
          name:
            description: The object's name.
            type: str
            required: true
          namespace:
            description: The object's namespace; the Secret's when omitted.
            type: str
          field:
            description: The dotted path of a scalar field, e.g. C(status.id).
            type: str
            required: true
      templates:
        description:
          - Keys rendered from the Secret's values with C(${key}); a string, or a mapping written as YAML
            after its string leaves are rendered.
          - Masked in the module's output like O(secrets[].values).
        type: dict
  namespace:
    description: Namespace of the Secrets that name none.
    type: str
notes:
  - The module never returns a value it generated or read, and masks what O(secrets[].values) and
    O(secrets[].templates) hold.
"""

EXAMPLES = r"""
- name: The Keystone admin password, generated once
  c5c3.cobaltcore.generated_secret:
    kubeconfig: "{{ cobaltcore_kubeconfig }}"
    namespace: openstack
    secrets:
      - name: keystone-admin-credentials
        generate: [password]

- name: A service user's password and a clouds.yaml that uses it
  c5c3.cobaltcore.generated_secret:
    kubeconfig: "{{ cobaltcore_kubeconfig }}"
    secrets:
      - name: glance-keystone-user
        namespace: openstack
        generate:
          - {key: password, length: 40}
        templates:
          clouds.yaml:
            clouds:
              glance:
                auth:
                  auth_url: https://keystone.openstack.svc.cluster.local:5000/v3
                  username: glance
                  password: "${password}"
                  user_domain_name: Default
                  project_name: service
                  project_domain_name: Default
"""

RETURN = r"""
secrets:
  description: One entry per Secret; never a value.
  returned: always
  type: list
  elements: dict
  contains:
    name:
      description: The Secret's name.
      type: str
    namespace:
      description: Its namespace.
      type: str
    result:
      description: C(created), C(configured) or C(unchanged).
      type: str
    generated:
      description: The keys whose values this run generated.
      type: list
      elements: str
requests:
  description: API requests this call made, by HTTP verb.
  returned: always
  type: dict
"""

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common import generated_secret
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.apply import normalize
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.client import KubeError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.module import KubeModule
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.read import Reader


WRITE_ATTEMPTS = 5


class GeneratedSecretModule(KubeModule):
    argument_spec = dict(
        secrets=dict(type="list", elements="dict", required=True, no_log=False, options=dict(
            name=dict(type="str", required=True),
            namespace=dict(type="str"),
            labels=dict(type="dict"),
            generate=dict(type="list", elements="raw"),
            values=dict(type="dict", no_log=True),
            values_from=dict(type="list", elements="dict", options=dict(
                key=dict(type="str", required=True, no_log=False),
                api_version=dict(type="str", required=True),
                kind=dict(type="str", required=True),
                name=dict(type="str", required=True),
                namespace=dict(type="str"),
                field=dict(type="str", required=True),
            )),
            templates=dict(type="dict", no_log=True),
        )),
        namespace=dict(type="str"),
    )
    narrowed_options = ("kubeconfig", "values", "templates")

    def narrowed_strings(self, params):
        secret, public = super(GeneratedSecretModule, self).narrowed_strings(params)
        given_secret, given_public = generated_secret.masked_strings(params.get("secrets"), params.get("namespace"))
        return secret | given_secret, (public | given_public) - given_secret

    def run(self):
        specs = generated_secret.validate(self.params["secrets"], self.params["namespace"])
        found = self.referenced(specs)
        outcomes = {}
        # Another writer (a role run on its own beside another run) may write a Secret between this call's read
        # and write: Secrets are created only when absent and changed only over the version read, and on a
        # conflict everything is read again - a value someone else generated is kept, never replaced.
        for unused in range(WRITE_ATTEMPTS):
            if self.write_all(specs, found, outcomes):
                break
        else:
            self.fail("Secrets %s changed under every one of %d attempts to write them" % (
                ", ".join("%s/%s" % (s["namespace"], s["name"]) for s in specs), WRITE_ATTEMPTS))
        self.results["secrets"] = [
            dict(outcomes[(spec["namespace"], spec["name"])], name=spec["name"], namespace=spec["namespace"])
            for spec in specs]

    def write_all(self, specs, found, outcomes):
        """One read-and-write of every Secret; False when another writer came first (outcomes keep what was done)."""
        creates, updates, generated, problems = [], [], {}, []
        # All of them read together (one LIST where they share labels), and not again by the applier below.
        live_secrets = Reader(self.client).read([
            {"apiVersion": "v1", "kind": "Secret", "name": spec["name"], "namespace": spec["namespace"],
             "labels": spec["labels"]} for spec in specs])
        for spec in specs:
            live = live_secrets[("v1", "Secret", spec["namespace"], spec["name"])]
            # Values read from the server are as secret as the ones generated here.
            self.hide_secret_values([live] if live else [])
            try:
                manifest, keys = generated_secret.desired_secret(spec, live, found)
            except InputError as error:
                problems.extend(error.problems)
                continue
            self.hide_secret_values([manifest])
            generated[(spec["namespace"], spec["name"])] = keys
            if live is None:
                creates.append(manifest)
            else:
                manifest["metadata"]["resourceVersion"] = live["metadata"]["resourceVersion"]
                updates.append(manifest)
        if problems:
            raise InputError(problems)
        results = []
        for obj in normalize(creates):
            result = self.write_as_read(obj, None)
            if result is None:
                return False
            results.append(result)
        try:
            # These Secrets are the module's: a key someone else rewrote is taken back (its value is kept
            # unless a template or value renders it).
            results += self.record(self.applier(force_conflicts=True).apply(normalize(updates), live=live_secrets))
        except KubeError as error:
            if error.status != 409:
                raise
            return False
        for result in results:
            key = (result["namespace"], result["name"])
            before = outcomes.get(key, {"result": "unchanged", "generated": []})
            outcomes[key] = {"result": before["result"] if result["result"] == "unchanged" else result["result"],
                             "generated": before["generated"] + generated[key]}
        return True

    def referenced(self, specs):
        """The objects values_from reads, by reference: one GET each, or a LIST per kind and namespace for several."""
        refs = dict((ref, {"apiVersion": ref[0], "kind": ref[1], "namespace": ref[2], "name": ref[3]})
                    for spec in specs for ref in map(generated_secret.reference, spec["values_from"]))
        reader = Reader(self.client, list_from=2)
        live = reader.read(list(refs.values()))
        found = dict((ref, live.get(reader.key(entry))) for ref, entry in refs.items())
        self.hide_secret_values([obj for obj in found.values() if obj and obj.get("kind") == "Secret"])
        return found


def main():
    GeneratedSecretModule()()


if __name__ == "__main__":
    main()
