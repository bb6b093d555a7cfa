"""JSON merge patch (RFC 7386) for the stand-ins' fake API servers."""

import json


def merge(target, patch):
    """Apply patch to target in place."""
    for key, value in patch.items():
        if value is None:
            target.pop(key, None)
        elif isinstance(value, dict) and isinstance(target.get(key), dict):
            merge(target[key], value)
        else:
            target[key] = json.loads(json.dumps(value))
