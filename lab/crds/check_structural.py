#!/usr/bin/env python3
"""Offline checks for the lab's CRDs (no API server needed).

    python3 lab/crds/check_structural.py              # hand-written lab/crds/*.yaml
    python3 lab/crds/check_structural.py --upstream   # also the pinned upstream CRDs (go mod download)
    python3 lab/crds/check_structural.py FILE...      # only these files

Checks, per CustomResourceDefinition document:
  * apiVersion apiextensions.k8s.io/v1, kind CustomResourceDefinition,
    metadata.name == <spec.names.plural>.<spec.group>, exactly one storage version;
  * the schema is structural in the apiextensions sense: every node has a `type`, unless it is
    x-kubernetes-int-or-string or x-kubernetes-preserve-unknown-fields; `properties` and
    `additionalProperties` never together; `items` is one schema; none of the keywords v1 CRDs
    forbid ($ref, definitions, patternProperties, dependencies, additionalItems, uniqueItems: true);
    no `type`/`additionalProperties`/`x-kubernetes-*` inside anyOf/allOf/oneOf/not;
  * list types: map lists have map keys that are required (or defaulted) scalar properties of the
    items, set lists have scalar items;
  * CEL rules are non-empty strings; printer columns have a known type and a .jsonPath;
  * hand-written CRDs (label lab.c5c3.io/source=hand-written) enable the status subresource and
    carry the lab.c5c3.io/clusters annotation.
For --upstream: every module in upstream.json is downloaded with `go mod download -json`, its
h1 sum compared with the pin, every listed file must exist and parse, and every listed
Group/Kind must be defined by exactly one CRD document of those files, which gets the same
checks. The real API server remains the final judge (it also compiles CEL and estimates cost).
Exit status 0 when everything passes.
"""
from __future__ import annotations

import glob
import json
import os
import subprocess
import sys

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
FORBIDDEN = ("$ref", "definitions", "patternProperties", "dependencies", "additionalItems", "id")
COLUMN_TYPES = {"integer", "number", "string", "boolean", "date"}
SCALARS = {"string", "integer", "number", "boolean"}


def _walk(node, path, errors, in_junctor=False):
    if not isinstance(node, dict):
        errors.append(f"{path}: schema node is not a mapping")
        return
    for key in FORBIDDEN:
        if key in node:
            errors.append(f"{path}: '{key}' is not allowed in apiextensions.k8s.io/v1 schemas")
    if node.get("uniqueItems") is True:
        errors.append(f"{path}: uniqueItems: true is not allowed (use x-kubernetes-list-type: set)")
    if in_junctor:
        for key in ("type", "additionalProperties", "default", "nullable", "description"):
            if key in node:
                errors.append(f"{path}: '{key}' is not allowed inside anyOf/allOf/oneOf/not")
        if any(k.startswith("x-kubernetes-") for k in node if k != "x-kubernetes-validations"):
            errors.append(f"{path}: x-kubernetes-* extensions are not allowed inside anyOf/allOf/oneOf/not")
    else:
        typed = bool(node.get("type"))
        free = node.get("x-kubernetes-int-or-string") is True or node.get("x-kubernetes-preserve-unknown-fields") is True
        if not typed and not free:
            errors.append(f"{path}: no type (and neither x-kubernetes-int-or-string nor x-kubernetes-preserve-unknown-fields)")
        if node.get("x-kubernetes-int-or-string") is True and node.get("type"):
            errors.append(f"{path}: x-kubernetes-int-or-string must not carry a type")
    if "properties" in node and "additionalProperties" in node:
        errors.append(f"{path}: properties and additionalProperties must not be used together")
    if node.get("type") not in (None, "object") and ("properties" in node or "additionalProperties" in node):
        errors.append(f"{path}: properties/additionalProperties on a non-object")
    for name, sub in (node.get("properties") or {}).items():
        _walk(sub, f"{path}.{name}", errors, in_junctor)
    add = node.get("additionalProperties")
    if isinstance(add, dict):
        _walk(add, f"{path}[*]", errors, in_junctor)
    elif add is False:
        errors.append(f"{path}: additionalProperties: false is not allowed")
    if "items" in node:
        items = node["items"]
        if isinstance(items, list):
            errors.append(f"{path}: items must be a single schema, not a list")
        else:
            _walk(items, f"{path}[]", errors, in_junctor)
    if node.get("type") == "array" and "items" not in node and not in_junctor:
        errors.append(f"{path}: array without items")
    for junctor in ("anyOf", "allOf", "oneOf"):
        for i, sub in enumerate(node.get(junctor) or []):
            if node.get("x-kubernetes-int-or-string") is True and sub in ({"type": "integer"}, {"type": "string"}):
                continue  # the one place a junctor may carry a type
            _walk(sub, f"{path}.{junctor}[{i}]", errors, True)
    if "not" in node:
        _walk(node["not"], f"{path}.not", errors, True)
    _list_type(node, path, errors)
    for i, rule in enumerate(node.get("x-kubernetes-validations") or []):
        if not isinstance(rule, dict) or not str(rule.get("rule", "")).strip():
            errors.append(f"{path}: x-kubernetes-validations[{i}] has no rule")


def _list_type(node, path, errors):
    lt = node.get("x-kubernetes-list-type")
    if lt is None:
        if "x-kubernetes-list-map-keys" in node:
            errors.append(f"{path}: x-kubernetes-list-map-keys without x-kubernetes-list-type: map")
        return
    if node.get("type") != "array":
        errors.append(f"{path}: x-kubernetes-list-type on a non-array")
        return
    items = node.get("items") or {}
    if lt == "set" and items.get("type") not in SCALARS:
        errors.append(f"{path}: a set list needs scalar items")
    elif lt == "map":
        keys = node.get("x-kubernetes-list-map-keys") or []
        if not keys:
            errors.append(f"{path}: list-type map without x-kubernetes-list-map-keys")
        props = items.get("properties") or {}
        for key in keys:
            prop = props.get(key)
            if prop is None:
                errors.append(f"{path}: map key '{key}' is not a property of the items")
            elif prop.get("type") not in SCALARS:
                errors.append(f"{path}: map key '{key}' is not a scalar")
            elif key not in (items.get("required") or []) and "default" not in prop:
                errors.append(f"{path}: map key '{key}' must be required or defaulted")
    elif lt not in ("atomic", "set", "map"):
        errors.append(f"{path}: unknown x-kubernetes-list-type {lt!r}")


def check_crd(doc, where, hand_written_required=False):
    """Return a list of problems of one CRD document."""
    errors = []
    if doc.get("apiVersion") != "apiextensions.k8s.io/v1":
        errors.append(f"apiVersion is {doc.get('apiVersion')!r}, not apiextensions.k8s.io/v1")
    if doc.get("kind") != "CustomResourceDefinition":
        return errors + [f"kind is {doc.get('kind')!r}, not CustomResourceDefinition"]
    meta, spec = doc.get("metadata") or {}, doc.get("spec") or {}
    names = spec.get("names") or {}
    expected = f"{names.get('plural')}.{spec.get('group')}"
    if meta.get("name") != expected:
        errors.append(f"metadata.name {meta.get('name')!r} != {expected!r}")
    for field in ("kind", "plural"):
        if not names.get(field):
            errors.append(f"spec.names.{field} missing")
    if spec.get("scope") not in ("Namespaced", "Cluster"):
        errors.append(f"spec.scope {spec.get('scope')!r}")
    versions = spec.get("versions") or []
    if sum(1 for v in versions if v.get("storage")) != 1:
        errors.append("exactly one version must be the storage version")
    hand_written = (meta.get("labels") or {}).get("lab.c5c3.io/source") == "hand-written"
    if hand_written_required and not hand_written:
        errors.append("hand-written CRD lacks label lab.c5c3.io/source=hand-written")
    if hand_written and not (meta.get("annotations") or {}).get("lab.c5c3.io/clusters"):
        errors.append("hand-written CRD lacks annotation lab.c5c3.io/clusters")
    for v in versions:
        vpath = f"{meta.get('name')}/{v.get('name')}"
        schema = ((v.get("schema") or {}).get("openAPIV3Schema"))
        if not schema:
            errors.append(f"{vpath}: no openAPIV3Schema")
            continue
        if schema.get("type") != "object":
            errors.append(f"{vpath}: root schema must be type object")
        if hand_written and "status" not in (v.get("subresources") or {}):
            errors.append(f"{vpath}: status subresource not enabled")
        _walk(schema, vpath, errors)
        for col in v.get("additionalPrinterColumns") or []:
            if col.get("type") not in COLUMN_TYPES or not str(col.get("jsonPath", "")).startswith("."):
                errors.append(f"{vpath}: printer column {col.get('name')!r} needs a known type and a .jsonPath")
    return [f"{where}: {e}" for e in errors]


def load_docs(path):
    with open(path, encoding="utf-8") as fh:
        return [d for d in yaml.safe_load_all(fh) if d is not None]


def check_hand_written(paths):
    problems, count = [], 0
    for path in paths:
        try:
            docs = load_docs(path)
        except yaml.YAMLError as exc:
            problems.append(f"{path}: does not parse: {exc}")
            continue
        group = os.path.basename(path)[: -len(".yaml")]
        for doc in docs:
            count += 1
            where = f"{os.path.relpath(path)}:{(doc.get('metadata') or {}).get('name')}"
            problems += check_crd(doc, where, hand_written_required=True)
            if (doc.get("spec") or {}).get("group") != group:
                problems.append(f"{where}: group {(doc.get('spec') or {}).get('group')!r} does not match file name")
    return problems, count


def download(module, version):
    out = subprocess.run(["go", "mod", "download", "-json", f"{module}@{version}"],
                         capture_output=True, text=True, check=False)
    info = json.loads(out.stdout or "{}")
    if out.returncode != 0 or info.get("Error"):
        raise RuntimeError(info.get("Error") or out.stderr.strip())
    return info


def upstream_crds(entry, info=None):
    """The CRD documents an upstream.json entry selects: files x kinds. Returns (docs, problems)."""
    info = info or download(entry["module"], entry["version"])
    problems, found = [], {}
    for pattern in entry["files"]:
        paths = sorted(glob.glob(os.path.join(info["Dir"], pattern)))
        if not paths:
            problems.append(f"{entry['name']}: no file matches {pattern}")
        for path in paths:
            for doc in load_docs(path):
                if doc.get("kind") != "CustomResourceDefinition":
                    continue
                spec = doc.get("spec") or {}
                gk = f"{spec.get('group')}/{(spec.get('names') or {}).get('kind')}"
                if gk in entry["kinds"]:
                    if gk in found:
                        problems.append(f"{entry['name']}: {gk} defined twice")
                    found[gk] = (doc, os.path.relpath(path, info["Dir"]))
    for gk in entry["kinds"]:
        if gk not in found:
            problems.append(f"{entry['name']}: {gk} not found in {entry['files']}")
    return found, problems


def check_upstream():
    with open(os.path.join(HERE, "upstream.json"), encoding="utf-8") as fh:
        entries = json.load(fh)
    problems, count = [], 0
    for entry in entries:
        try:
            info = download(entry["module"], entry["version"])
        except (RuntimeError, json.JSONDecodeError) as exc:
            problems.append(f"{entry['name']}: {entry['module']}@{entry['version']} not downloadable: {exc}")
            continue
        if entry.get("sum") and info.get("Sum") != entry["sum"]:
            problems.append(f"{entry['name']}: sum {info.get('Sum')} != pinned {entry['sum']}")
        found, errs = upstream_crds(entry, info)
        problems += errs
        for gk, (doc, rel) in sorted(found.items()):
            count += 1
            problems += check_crd(doc, f"{entry['module']}@{entry['version']}/{rel}:{gk}")
    return problems, count


def main(argv):
    upstream = "--upstream" in argv
    paths = [a for a in argv if not a.startswith("--")] or sorted(glob.glob(os.path.join(HERE, "*.yaml")))
    problems, count = check_hand_written(paths)
    print(f"hand-written: {count} CRDs in {len(paths)} files")
    if upstream:
        up_problems, up_count = check_upstream()
        problems += up_problems
        print(f"upstream: {up_count} CRDs")
    for p in problems:
        print("FAIL", p)
    print("OK" if not problems else f"{len(problems)} problem(s)")
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
