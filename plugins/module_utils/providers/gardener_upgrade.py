# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The region's Shoots to a Kubernetes version in the seed's order (pure).

One minor version per step, as gardener-apiserver allows (a skipped minor is refused). Per minor the control-plane
Shoots move together, then the storage pools one by one, then the hypervisor pools one by one; every step waits until
its Shoots are reconciled before the next is written. A version several minors ahead moves in consecutive steps, at
most minor_steps of them. The plan is made from the versions the Shoots' specs name, so a run that stopped resumes.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import problem
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.providers import gardener

FIELD_MANAGER = "c5c3.cobaltcore.kubernetes-upgrade"
STAGE_ORDER = [stage for unused, stage in gardener.UPGRADE_STAGES]
# Storage and hypervisor pools move one Shoot per step; the control plane's Shoots together.
TOGETHER = ("control plane",)


def ordered(shoots):
    """The Shoots in the seed's stage order (stable within a stage)."""
    return sorted(shoots, key=lambda s: STAGE_ORDER.index(s["stage"]))


def _target_reached(live, target):
    """Whether a Shoot running live is at the target: a short target takes any patch of its minor."""
    return live[:2] == target[:2] and (target[2] is None or live[2] == target[2])


def _step_version(offered, minor, target):
    """The version a Shoot moves to for minor: the target itself in its minor when it names a patch, else what
    Gardener would default "<major>.<minor>" to."""
    if minor == target[:2] and target[2] is not None:
        text = gardener.version_text(target)
        return text if text in offered else None
    return gardener.default_patch(offered, minor)


def plan(shoots, live, profiles, version=None, minor_steps=1):
    """(steps, problems).

    shoots: [{name, cluster, stage, version}] (a Shoot's version: its own target, else version; neither: it stays);
    live: {name: Shoot}; profiles: {name: the Shoot's cloud profile, or None}; version: the target ("1.35" or
    "1.35.2").
    steps: [{minor, stage, moves: [{name, cluster, stage, from, to}]}] in order. problems: everything that refuses
    the move, before any write.
    """
    problems, todo = [], []
    for shoot in ordered(shoots):
        name, current = shoot["name"], live.get(shoot["name"])
        where = "Shoot " + name
        wanted = shoot.get("version") or version
        if not wanted:
            continue  # no version asked: Gardener keeps it (and its maintenance moves the patch)
        target = gardener.parse_version(wanted)
        if target is None:
            problems.append(problem("version", "%r is not <major>.<minor>[.<patch>]" % (wanted,), where))
            continue
        if current is None:
            problems.append(problem("shoots", "Shoot %s does not exist: phase 2 (playbooks/clusters.yml) creates it"
                                    % name))
            continue
        if (current.get("metadata") or {}).get("deletionTimestamp"):
            problems.append(problem("metadata.deletionTimestamp", "the Shoot is being deleted", where))
            continue
        running = gardener.kubernetes_version(current.get("spec"))
        before = gardener.parse_version(running)
        if before is None or before[2] is None:
            problems.append(problem("spec.kubernetes.version", "%r is no Kubernetes version Gardener set" % (running,),
                                    where))
            continue
        if before[0] != target[0]:
            problems.append(problem("spec.kubernetes.version", "runs %s; %s is another major version" % (running, wanted),
                                    where))
        elif target[:2] < before[:2] or (target[:2] == before[:2] and target[2] is not None and target[2] < before[2]):
            problems.append(problem("spec.kubernetes.version", "runs %s; a downgrade to %s is not supported "
                                    "(gardener-apiserver refuses it)" % (running, wanted), where))
        elif target[1] - before[1] > minor_steps:
            problems.append(problem("spec.kubernetes.version", "runs %s; %s is %d minor versions ahead and minor_steps "
                                    "allows %d: Gardener moves one minor version at a time, raise minor_steps "
                                    "(cobaltcore_kubernetes_minor_steps) to move in consecutive steps"
                                    % (running, wanted, target[1] - before[1], minor_steps), where))
        elif not _target_reached(before, target):
            profile = profiles.get(name) or {}
            todo.append({"shoot": shoot, "spec": current.get("spec"), "at": before, "target": target,
                         "wanted": wanted, "profile": profile, "offered": gardener.offered_kubernetes(profile)})
    if problems:
        return [], problems
    steps = []
    minors = sorted(set((t["target"][0], m) for t in todo for m in range(t["at"][1], t["target"][1] + 1)))
    for minor in minors:
        for stage in STAGE_ORDER:
            moves = []
            for entry in todo:
                shoot, at, target = entry["shoot"], entry["at"], entry["target"]
                if (shoot["stage"] != stage or minor > target[:2] or at[:2] > minor
                        or (at[:2] == minor and minor != target[:2])):
                    continue
                to = _step_version(entry["offered"], minor, target)
                if to is None:
                    problems.append(_no_version(entry["spec"], minor, target, entry["wanted"], shoot["name"]))
                    continue
                if gardener.parse_version(to) <= at:
                    continue
                problems += gardener.kubelet_problems(entry["profile"], shoot["name"], entry["spec"], to)
                moves.append({"name": shoot["name"], "cluster": shoot.get("cluster"), "stage": stage,
                              "from": gardener.version_text(at), "to": to})
                entry["at"] = gardener.parse_version(to)  # the next minor starts from this one
            groups = [moves] if stage in TOGETHER else [[move] for move in moves]
            steps += [{"minor": gardener.version_text(minor), "stage": stage, "moves": group} for group in groups if group]
    if problems:
        return [], problems
    return steps, []


def _no_version(spec, minor, target, wanted, name):
    what = "%(kind)s %(name)s" % gardener.shoot_cloud_profile(spec)
    if minor == target[:2] and target[2] is not None:
        text = "%s does not offer %s" % (what, gardener.version_text(target))
    else:
        text = ("%s offers no supported Kubernetes %s patch (Gardener defaults a minor version to its newest supported "
                "patch; a preview one must be named)%s" % (what, gardener.version_text(minor), "" if minor == target[:2]
                                                           else ": the move to %s goes through it" % wanted))
    return problem("spec.kubernetes.version", text, "Shoot " + name)


def step_line(number, step):
    moves = ", ".join("%s (%s -> %s)" % (m["name"], m["from"], m["to"]) for m in step["moves"])
    return "step %d: Kubernetes %s on the %s: %s" % (number, step["minor"], step["stage"], moves)


def plan_lines(steps, version=None):
    if not steps:
        target = "Kubernetes " + version if version else "the Kubernetes version it is to run"
        return ["every Shoot runs %s: nothing to move" % target]
    return [step_line(number, step) for number, step in enumerate(steps, 1)]


def manifest(name, namespace, version):
    """The server-side apply of a step: spec.kubernetes.version alone."""
    return {"apiVersion": gardener.API_VERSION, "kind": "Shoot", "metadata": {"name": name, "namespace": namespace},
            "spec": {"kubernetes": {"version": version}}}
