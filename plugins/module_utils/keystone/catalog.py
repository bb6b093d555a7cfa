# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Phase 5, pure logic: the service catalog of one OpenStack cluster as K-ORC manifests.

``catalog_plan(settings)`` validates one OpenStack cluster's settings (every
problem reported together) and returns everything the keystone_bootstrap role
applies and checks, in dependency order:

* ``imports``: what ``keystone-manage bootstrap`` created, imported with
  ``managementPolicy: unmanaged`` (Domain, the admin Project, Roles, the
  identity Service), plus the service Project (managed with ``onDelete: detach``
  unless told to import it: ``keystone-manage bootstrap`` does not create it);
* ``catalog``: a managed Service per enabled service and its public and internal
  Endpoints (the identity Service's Endpoints adopt the bootstrap's ones);
* ``users``: a managed service User per service that runs as one;
* ``application_credentials``: a managed ApplicationCredential per service user of
  the cluster's service credential version, its secret in
  ``<service>-keystone-credentials`` (version 0) or ``<service>-keystone-credentials-v<N>``
  (K-ORC v2.6.0 reads key ``value`` from it when it creates the credential and
  writes nothing back);
* ``secrets``: the Secrets c5c3.cobaltcore.generated_secret ensures before the
  objects that need them (passwords and credential secrets are generated there),
  and ``credential_secrets``: the Secrets the service CRs name
  (``<service>-keystone-credentials``) completed afterwards with the current
  credential's ID (copied from K-ORC's status.id), its secret and a clouds.yaml;
* ``retired_secrets`` and ``retired_credentials``: the password Secrets, the
  ApplicationCredentials and their Secrets of versions before the current ones;
* ``role_assignments``, ``endpoints``, ``services``: what the modules
  keystone_role_assignments, keystone_endpoint_regions and keystone_verify get.

No Kubernetes client, no OpenStack client, no Ansible: unit-tested on its own.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.keystone.settings import (
    CREDENTIAL_SECRET_LENGTH, IDENTITY_SERVICE, INTERFACES, PASSWORD_LENGTH, normalize_settings)
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import naming


def labels(s):
    return {naming.MANAGED_BY_LABEL: naming.MANAGED_BY, naming.OPENSTACK_CLUSTER_NAME_LABEL: s["cluster"]}


def _object(kind, name, s, spec):
    return {"apiVersion": naming.KORC_API_VERSION, "kind": kind,
            "metadata": {"name": name, "namespace": s["namespace"], "labels": labels(s)},
            "spec": spec}


def _korc_credentials(s):
    return {"secretName": s["korc_secret"], "cloudName": s["korc_cloud"]}


def _imported(kind, name, s, query):
    return _object(kind, name, s, {"cloudCredentialsRef": _korc_credentials(s), "managementPolicy": "unmanaged",
                                   "import": {"filter": query}})


def _managed(kind, name, s, resource, detach=False, credentials=None):
    spec = {"cloudCredentialsRef": credentials or _korc_credentials(s), "managementPolicy": "managed",
            "resource": resource}
    if detach:
        spec["managedOptions"] = {"onDelete": "detach"}
    return _object(kind, name, s, spec)


def _refs(s):
    return {"domain": naming.korc_object_name(s["domain"]),
            "admin_project": naming.korc_object_name(s["admin_project"]),
            "service_project": naming.korc_object_name(s["service_project"])}


def import_manifests(s):
    refs = _refs(s)
    objects = [
        _imported("Domain", refs["domain"], s, {"name": s["domain"]}),
        _imported("Project", refs["admin_project"], s, {"name": s["admin_project"], "domainRef": refs["domain"]}),
    ]
    if s["service_project_policy"] == "unmanaged":
        objects.append(_imported("Project", refs["service_project"], s,
                                 {"name": s["service_project"], "domainRef": refs["domain"]}))
    else:
        # keystone-manage bootstrap does not create it: adopt it when it exists, else create
        # it, and never delete it with the K-ORC object.
        objects.append(_managed("Project", refs["service_project"], s,
                                {"name": s["service_project"], "domainRef": refs["domain"]}, detach=True))
    objects.extend(_imported("Role", naming.korc_object_name(role), s, {"name": role}) for role in s["roles"])
    for service in s["services"]:
        if service["name"] == IDENTITY_SERVICE:
            objects.append(_imported("Service", IDENTITY_SERVICE, s,
                                     {"name": IDENTITY_SERVICE, "type": service["type"]}))
    return objects


def catalog_manifests(s):
    objects = []
    for service in s["services"]:
        name = service["name"]
        identity = name == IDENTITY_SERVICE
        if not identity:
            objects.append(_managed("Service", name, s, {"name": name, "type": service["type"], "enabled": True,
                                                         "description": service["description"]}))
        for interface in INTERFACES:
            # The identity endpoints are the bootstrap's: K-ORC adopts them (same service, interface
            # and URL) and leaves them in Keystone when the K-ORC object goes.
            objects.append(_managed("Endpoint", naming.korc_endpoint(name, interface), s,
                                    {"serviceRef": name, "interface": interface,
                                     "url": service["%s_url" % interface], "enabled": True}, detach=identity))
    return objects


def cloud(auth, region, interface, auth_type=None):
    """A cloud of a clouds.yaml. The catalog interface is in both keys: K-ORC (gophercloud's clientconfig) reads
    endpoint_type and ignores interface, openstacksdk reads interface."""
    entry = {"auth_type": auth_type} if auth_type else {}
    entry.update(auth=auth, region_name=region, interface=interface, endpoint_type=interface, identity_api_version=3)
    return entry


def _users(s):
    return [service for service in s["services"] if service["user"]]


def user_secret(s, service):
    """The service user's password Secret of the cluster's service password version."""
    return naming.service_keystone_user_secret(service, password_version(s))


def password_version(s):
    return s.get("service_password_version") or 0


def credential_version(s):
    return s.get("service_credential_version") or 0


def _retired(s, api_version, kind, name_of, versions):
    """What state=absent deletes: each service user's object name_of(service, version) of the given versions."""
    return [{"apiVersion": api_version, "kind": kind, "metadata": {
        "namespace": s["namespace"], "name": name_of(service["name"], old)}}
        for service in _users(s) for old in versions]


def retired_user_secrets(s):
    """The service users' password Secrets of the versions before the cluster's: removed once K-ORC applied the
    current one (a Secret of a retired version holds a password Keystone no longer takes)."""
    return _retired(s, "v1", "Secret", naming.service_keystone_user_secret,
                    range(password_version(s)))


def retired_credentials(s):
    """The ApplicationCredentials of the versions before the cluster's (K-ORC deletes each in Keystone), then the
    Secrets K-ORC created them with; version 0's Secret is the one the service CR names and stays."""
    version = credential_version(s)
    return (_retired(s, naming.KORC_API_VERSION, "ApplicationCredential", naming.service_application_credential,
                     range(version))
            + _retired(s, "v1", "Secret", naming.service_keystone_credentials_secret, range(1, version)))


def user_manifests(s):
    refs = _refs(s)
    return [_managed("User", service["name"], s, {
        "name": service["name"], "description": "%s service user (c5c3.cobaltcore)" % service["name"],
        "domainRef": refs["domain"], "defaultProjectRef": refs["service_project"], "enabled": True,
        "passwordRef": user_secret(s, service["name"])}) for service in _users(s)]


def application_credential_manifests(s):
    # Keystone lets only the owner create an application credential, and a restricted
    # credential (K-ORC's own) may not create any: K-ORC creates each one with the service
    # user's own password credentials, scoped to the service project.
    # Immutable in K-ORC: each credential version is an object (and a Keystone name) of its own.
    objects = []
    version = credential_version(s)
    for service in _users(s):
        name = service["name"]
        credential = naming.service_application_credential(name, version)
        objects.append(_managed("ApplicationCredential", credential, s, {
            "name": credential, "description": "%s service credentials (c5c3.cobaltcore)" % name,
            "userRef": name, "secretRef": naming.service_keystone_credentials_secret(name, version),
            "roleRefs": [naming.korc_object_name(role) for role in service["roles"]],
            "unrestricted": False,
        }, credentials={"secretName": user_secret(s, name), "cloudName": name}))
    return objects


def _secret_labels(s, service):
    result = labels(s)
    result["c5c3.io/openstack-service"] = service
    return result


def secret_specs(s):
    """Input of c5c3.cobaltcore.generated_secret: password and credential Secrets, values generated there."""
    specs = []
    for service in _users(s):
        name = service["name"]
        specs.append({
            "name": user_secret(s, name), "namespace": s["namespace"],
            "labels": _secret_labels(s, name),
            "generate": [{"key": naming.KORC_PASSWORD_KEY, "length": PASSWORD_LENGTH}],
            "templates": {naming.KORC_CLOUDS_KEY: {"clouds": {name: cloud(
                {"auth_url": s["korc_auth_url"], "username": name, "password": "${%s}" % naming.KORC_PASSWORD_KEY,
                 "user_domain_name": s["domain"], "project_name": s["service_project"],
                 "project_domain_name": s["domain"]},
                s["region"], s["korc_interface"])}}},
        })
        specs.append({
            "name": naming.service_keystone_credentials_secret(name, credential_version(s)),
            "namespace": s["namespace"], "labels": _secret_labels(s, name),
            "generate": [{"key": naming.KORC_APPLICATION_CREDENTIAL_SECRET_KEY, "length": CREDENTIAL_SECRET_LENGTH}],
        })
    return specs


def catalog_plan(settings):
    s = normalize_settings(settings)
    refs = _refs(s)
    plan = {
        "settings": dict((k, v) for k, v in s.items() if k != "services"),
        "namespace": s["namespace"],
        "imports": import_manifests(s),
        "catalog": catalog_manifests(s),
        "users": user_manifests(s),
        "application_credentials": application_credential_manifests(s),
        "secrets": secret_specs(s),
        "credential_secrets": credential_secret_specs(s),
        "retired_secrets": retired_user_secrets(s),
        "retired_credentials": retired_credentials(s),
        "role_assignments": [{"user": service["name"], "user_domain": s["domain"], "project": s["service_project"],
                              "project_domain": s["domain"], "roles": list(service["roles"])}
                             for service in _users(s)],
        "endpoints": [{"service": service["name"], "type": service["type"], "interface": interface,
                       "url": service["%s_url" % interface]}
                      for service in s["services"] for interface in INTERFACES],
        "services": [{"name": service["name"], "type": service["type"], "user": service["user"],
                      "roles": list(service["roles"]) if service["user"] else [],
                      "public_url": service["public_url"], "internal_url": service["internal_url"],
                      "credentials_secret": (naming.service_keystone_credentials_secret(service["name"])
                                             if service["user"] else None)}
                     for service in s["services"]],
        "refs": refs,
    }
    return plan


def refs_of(manifests):
    """[{api_version, kind, name, namespace, labels}] for c5c3.cobaltcore.wait (the labels let it read many
    tenants' objects with one request)."""
    return [{"api_version": m["apiVersion"], "kind": m["kind"], "name": m["metadata"]["name"],
             "namespace": m["metadata"].get("namespace"), "labels": m["metadata"].get("labels") or {}}
            for m in manifests]


def credential_secret_specs(s):
    """generated_secret input completing each credential Secret once K-ORC created the credential.

    K-ORC v2.6.0 writes the credential's ID only into the ApplicationCredential's status.id;
    the module copies it (values_from) and renders a clouds.yaml whose secret is the
    generated ``value``, referred to as ${value}: the secret never passes through Ansible.
    From version 1 on, ``value`` is copied from the version's Secret as well, so the service CR's
    Secret switches from one credential to the next in one write.
    """
    specs = []
    version = credential_version(s)
    for service in _users(s):
        name = service["name"]
        values_from = [{"key": "application_credential_id", "api_version": naming.KORC_API_VERSION,
                        "kind": "ApplicationCredential", "name": naming.service_application_credential(name, version),
                        "field": "status.id"}]
        generate = []
        if version:
            values_from.append({"key": naming.KORC_APPLICATION_CREDENTIAL_SECRET_KEY, "api_version": "v1",
                                "kind": "Secret", "name": naming.service_keystone_credentials_secret(name, version),
                                "field": "data." + naming.KORC_APPLICATION_CREDENTIAL_SECRET_KEY})
        else:
            generate = [{"key": naming.KORC_APPLICATION_CREDENTIAL_SECRET_KEY, "length": CREDENTIAL_SECRET_LENGTH}]
        specs.append({
            "name": naming.service_keystone_credentials_secret(name), "namespace": s["namespace"],
            "labels": _secret_labels(s, name), "generate": generate, "values_from": values_from,
            "values": {"auth_url": s["consumer_auth_url"], "region_name": s["region"]},
            "templates": {naming.KORC_CLOUDS_KEY: {"clouds": {name: cloud(
                {"auth_url": s["consumer_auth_url"], "application_credential_id": "${application_credential_id}",
                 "application_credential_secret": "${%s}" % naming.KORC_APPLICATION_CREDENTIAL_SECRET_KEY},
                s["region"], s["consumer_interface"], auth_type="v3applicationcredential")}}},
        })
    return specs
