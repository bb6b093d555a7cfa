# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Keystone admin password's rotation where the collection owns its Secret (pure).

The Keystone CR names the Secret of its admin password (spec.bootstrap.adminPasswordSecretRef {name, key}, key
default password) and its admin user (spec.bootstrap.adminUser, default admin). The keystone-operator re-runs
`keystone-manage bootstrap` whenever the password's digest changes, which sets the new password on the admin user
(Keystone then revokes the user's tokens; application credentials stay valid). A rotation writes a new password
with the annotation cobaltcore.c5c3.io/rotation-id, so the same id again writes nothing; it is done when the
Keystone accepts the new password.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.conditions import condition
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region.key_rotation import ROTATION_ID_LABEL

ROTATION_ID_ANNOTATION = ROTATION_ID_LABEL
DEFAULT_KEY = "password"
# Upstream's keystone-operator refuses a generated admin password shorter than 24 (DefaultAdminPasswordMinLength).
MIN_LENGTH = 24
ADMIN_PROJECT = "admin"  # keystone-manage bootstrap's --bootstrap-project-name, as the keystone-operator runs it


def secret_ref(keystone):
    """(Secret name, key) of the admin password the Keystone CR names; (None, key) when it names none."""
    ref = ((keystone.get("spec") or {}).get("bootstrap") or {}).get("adminPasswordSecretRef") or {}
    return ref.get("name"), ref.get("key") or DEFAULT_KEY


def admin_user(keystone):
    return ((keystone.get("spec") or {}).get("bootstrap") or {}).get("adminUser") or "admin"


def rotation_of(secret):
    """The rotation id the Secret's password was written for, or None."""
    return (((secret or {}).get("metadata") or {}).get("annotations") or {}).get(ROTATION_ID_ANNOTATION)


def rotated_secret(secret, key, encoded_password, rotation_id):
    """The Secret with the new password (base64) and the rotation id, for a PUT over the version read."""
    meta = dict(secret["metadata"])
    meta["annotations"] = dict(meta.get("annotations") or {}, **{ROTATION_ID_ANNOTATION: rotation_id})
    for field in ("managedFields", "creationTimestamp", "uid"):
        meta.pop(field, None)
    data = dict(secret.get("data") or {})
    data[key] = encoded_password
    return dict(secret, apiVersion="v1", kind="Secret", metadata=meta, data=data)


def token_request(user, password):
    """The body of a project-scoped password authentication as the admin (POST /v3/auth/tokens)."""
    return {"auth": {"identity": {"methods": ["password"], "password": {"user": {
        "name": user, "domain": {"id": "default"}, "password": password}}},
        "scope": {"project": {"name": ADMIN_PROJECT, "domain": {"id": "default"}}}}}


def bootstrap_condition(keystone):
    """BootstrapReady of the Keystone CR as 'status reason: message', for a message that says why it waits."""
    found = condition(keystone, "BootstrapReady")
    if found is None:
        return "BootstrapReady not reported"
    return "BootstrapReady %s %s: %s" % (found.get("status"), found.get("reason"), found.get("message"))
