"""gardener-apiserver's rules for a Shoot's Kubernetes version, played by the lab's Shoot webhook (shoot_admission.py).

Upstream (gardener b312835):
- ShootMutator (plugin/pkg/shoot/mutator/admission.go defaultKubernetesVersion): a version without a patch
  ("1.33") becomes the newest patch of that minor the cloud profile classifies exactly `supported`; without one the
  write is refused;
- ShootValidator (plugin/pkg/shoot/validator/admission.go validateKubernetesVersionConstraints): a changed version
  must be one the cloud profile lists; on create an expired one is not taken, on update any listed one is;
- ValidateKubernetesVersionUpdate (pkg/api/core/validation/shoot.go): no downgrade, no skipped minor version.

Only spec.kubernetes.version is played (no worker pool versions, no machine images' kubeletVersionConstraint: the
lab's cloud profile has none), and only for a Shoot whose cloud profile exists (the lab's own tests name others).
"""

import datetime
import re

FIELD = "spec.kubernetes.version"
_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?$")


def _parse(value):
    match = _VERSION.match(str(value or ""))
    return tuple(int(p) if p is not None else None for p in match.groups()) if match else None


def _version(shoot):
    return (((shoot or {}).get("spec") or {}).get("kubernetes") or {}).get("version")


def _classified(profile, now):
    """[(version, classification)]: an expirationDate in the past is expired, no classification is supported."""
    result = []
    for entry in ((profile.get("spec") or {}).get("kubernetes") or {}).get("versions") or []:
        classification = entry.get("classification") or "supported"
        expires = entry.get("expirationDate")
        if expires and datetime.datetime.strptime(expires.replace("Z", "+0000"), "%Y-%m-%dT%H:%M:%S%z") <= now:
            classification = "expired"
        result.append((str(entry["version"]), classification))
    return result


def review(operation, old, new, profile, now=None):
    """(version to store or None when unchanged, (code, reason, message) of a refusal or None)."""
    asked = _version(new)
    if not asked or profile is None:
        return None, None
    now = now or datetime.datetime.now(datetime.timezone.utc)
    offered = _classified(profile, now)
    parsed = _parse(asked)
    if parsed is None:
        return None, (422, "Invalid", '%s: Invalid value: "%s": must be a semantic version' % (FIELD, asked))
    stored = asked
    if parsed[2] is None:
        patches = [_parse(v) for v, c in offered if c == "supported"]
        patches = [p for p in patches if p and p[:2] == parsed[:2]]
        if not patches:
            return None, (422, "Invalid", '%s: Invalid value: "%s": couldn\'t find a suitable version for %s. Suitable '
                          "versions have a non-expired expiration date and are no 'preview' versions. 'Preview'-"
                          "classified versions have to be selected explicitly" % (FIELD, asked, asked))
        stored = ".".join(str(p) for p in max(patches))
    before = _version(old) if operation == "UPDATE" else None
    if stored != before:
        usable = [(v, c) for v, c in offered if operation == "UPDATE" or c not in ("expired", "unavailable")]
        if stored not in [v for v, unused in usable]:
            return None, (403, "Forbidden", '%s: Unsupported value: "%s": supported values: %s' % (
                FIELD, stored, ", ".join('"%s%s"' % (v, " (preview)" if c == "preview" else "") for v, c in usable)))
        old_parsed, new_parsed = _parse(before), _parse(stored)
        if old_parsed and old_parsed[2] is not None:
            if new_parsed < old_parsed:
                return None, (422, "Invalid", "%s: Forbidden: kubernetes version downgrade is not supported" % FIELD)
            if new_parsed[:2] >= (old_parsed[0], old_parsed[1] + 2):
                return None, (422, "Invalid", "%s: Forbidden: kubernetes version upgrade cannot skip a minor version"
                              % FIELD)
    return (stored if stored != asked else None), None
