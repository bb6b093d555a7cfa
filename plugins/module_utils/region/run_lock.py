# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The region run lock: a coordination.k8s.io/v1 Lease per region on the management cluster.

Pure: what a run decides about a Lease it read (free, its own, held by a live run, by a dead one,
expired, broken on request), the Lease it writes, and who holds it in words. The run is the
ansible-playbook process on its controller: host, pid and the pid's start time (a reused pid is not
the old run), and the kernel's boot_id and PID namespace the pid belongs to (runs in two containers
with one host name have their own pids). Reading /proc is the only outside access, through
functions the callers pass in.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import collections
import datetime
import os

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common import collection
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.kube_names import (
    is_dns1123_label, is_dns1123_subdomain)
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common import timestamps

API_VERSION = "coordination.k8s.io/v1"
KIND = "Lease"
DEFAULT_NAMESPACE = "kube-system"
NAME_PREFIX = "cobaltcore-run-"
ANNOTATION_PREFIX = "cobaltcore.c5c3.io/lock-"
FIELDS = ("host", "pid", "started", "user", "job", "boot_id", "pid_namespace")
MANAGED_BY_LABEL = collection.MANAGED_BY_LABEL
MANAGED_BY = collection.NAME
MIN_DURATION = 15

# What a run does with the Lease it read.
CREATE = "create"        # no Lease yet
TAKE = "take"            # a Lease nobody holds (released)
RENEW = "renew"          # held by this very run (a phase playbook after another)
TAKE_OVER = "take_over"  # held by a run that is gone (dead on this controller, expired) or broken on request
WAIT = "wait"            # held by a run that may still be running

Holder = collections.namedtuple("Holder", FIELDS)
Decision = collections.namedtuple("Decision", ["action", "reason"])


def lease_name(region):
    return NAME_PREFIX + region


def is_lock(obj):
    """Whether a live object is a region's run lock (a run's record, not something an inventory declares)."""
    name = (obj.get("metadata") or {}).get("name") or ""
    return (obj.get("apiVersion"), obj.get("kind")) == (API_VERSION, KIND) and name.startswith(NAME_PREFIX)


def validate(region, name, namespace, wait, duration):
    """Problems of the lock's settings, all at once (InputError)."""
    problems = []
    if not region:
        problems.append("region: is required")
    lease = name or lease_name(region or "")
    if region and not is_dns1123_subdomain(lease):
        problems.append("name: %r is not a valid Lease name (DNS-1123 subdomain)" % lease)
    if not is_dns1123_label(namespace):
        problems.append("namespace: %r is not a valid namespace name" % namespace)
    if wait is None or wait < 0:
        problems.append("wait: must be 0 or more seconds, got %r" % wait)
    if duration is None or duration < MIN_DURATION:
        problems.append("lease_duration: must be at least %d seconds, got %r" % (MIN_DURATION, duration))
    if problems:
        raise InputError(problems)
    return lease


# -- time (MicroTime as the API server writes it) -----------------------------

def format_time(moment):
    return moment.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


# -- who holds it --------------------------------------------------------------

def identity(holder):
    """spec.holderIdentity, for people: the annotations (start time, boot_id, PID namespace) tell runs apart."""
    text = "%s@%s pid %s" % (holder.user or "?", holder.host, holder.pid)
    if holder.job:
        text += " (AWX job %s)" % holder.job
    return text


def annotation_key(field):
    """cobaltcore.c5c3.io/lock-<field>, with dashes (lock-boot-id, lock-pid-namespace)."""
    return ANNOTATION_PREFIX + field.replace("_", "-")


def annotations(holder):
    return dict((annotation_key(field), str(getattr(holder, field) or "")) for field in FIELDS)


def holder_of(lease):
    """The Holder the annotations of a held Lease name; None for a free Lease or one without them."""
    spec = (lease or {}).get("spec") or {}
    if not spec.get("holderIdentity"):
        return None
    found = ((lease.get("metadata") or {}).get("annotations") or {})
    values = dict((field, found.get(annotation_key(field)) or None) for field in FIELDS)
    if not values["host"] or not values["pid"]:
        return None
    try:
        values["pid"] = int(values["pid"])
    except ValueError:
        return None
    return Holder(**values)


def same_run(one, other):
    """The same process: also its boot and PID namespace, as two containers' pid 1 may start in one tick."""
    return (one is not None and other is not None and one.host == other.host and one.pid == other.pid
            and str(one.started) == str(other.started) and one.boot_id == other.boot_id
            and one.pid_namespace == other.pid_namespace)


def same_controller(holder, me):
    """Whether the holder's pid names a process this run can look at in its /proc.

    Only with the same host name, the same boot of the kernel (boot_id) and the same PID namespace:
    runs in two containers, or two pods with hostNetwork, may share the host name but not their pids.
    A holder without boot_id or PID namespace (a Lease an earlier build of the collection wrote), or
    a run that does not know its own, is never on this controller.
    """
    return (holder.host == me.host and bool(me.boot_id) and bool(me.pid_namespace)
            and holder.boot_id == me.boot_id and holder.pid_namespace == me.pid_namespace)


def not_here(holder, me):
    """Why a holder with this run's host name is not on this controller, in words (None when it is)."""
    if holder.host != me.host or same_controller(holder, me):
        return None
    if not me.boot_id or not me.pid_namespace:
        return "this run does not know its own boot_id or PID namespace: the holder's process is not looked at"
    if not holder.boot_id or not holder.pid_namespace:
        return ("its Lease names no boot_id or PID namespace, as an earlier build of the collection wrote it: "
                "its process is not looked at")
    return "a run with this host name in another PID namespace or boot: its process cannot be seen from here"


def expires(lease):
    """When the holder's lease ends without a renewal (renewTime + leaseDurationSeconds), None if unknown."""
    spec = (lease or {}).get("spec") or {}
    renewed = timestamps.parse_datetime(spec.get("renewTime")) or timestamps.parse_datetime(spec.get("acquireTime"))
    if renewed is None or not spec.get("leaseDurationSeconds"):
        return None
    return renewed + datetime.timedelta(seconds=int(spec["leaseDurationSeconds"]))


def describe(lease, now=None):
    """Who holds the Lease and since when, for the operator: one line."""
    spec = (lease or {}).get("spec") or {}
    text = "held by %s since %s" % (spec.get("holderIdentity"), spec.get("acquireTime") or "?")
    if spec.get("renewTime"):
        text += ", renewed %s" % spec["renewTime"]
    end = expires(lease)
    if end is not None:
        verb = "expired" if now is not None and end <= now else "expires"
        text += ", %s %s" % (verb, format_time(end))
    return text


def decide(lease, me, now, alive, break_lock=False):
    """What this run does with the Lease it read.

    alive(holder) is True or False for a holder on this controller (its process runs or not) and
    None when it cannot tell; it is only asked about holders on this controller (same_controller).
    A holder elsewhere - also one with this host name in another PID namespace - is waited for until
    its lease expires, or taken over with break_lock.
    """
    if lease is None:
        return Decision(CREATE, "no run lock yet")
    spec = lease.get("spec") or {}
    if not spec.get("holderIdentity"):
        return Decision(TAKE, "the run lock is free")
    holder = holder_of(lease)
    if same_run(holder, me):
        return Decision(RENEW, "this run holds the lock")
    who = spec["holderIdentity"]
    if holder is not None and same_controller(holder, me):
        state = alive(holder)
        if state is False:
            return Decision(TAKE_OVER, "the run lock's holder %s no longer runs on this controller" % who)
        if state is True and not break_lock:
            return Decision(WAIT, describe(lease, now) + " (its process runs on this controller)")
    end = expires(lease)
    if end is not None and end <= now:
        return Decision(TAKE_OVER, "the run lock of %s expired at %s" % (who, format_time(end)))
    if break_lock:
        return Decision(TAKE_OVER, "the run lock of %s was broken (cobaltcore_break_lock=true): %s"
                        % (who, describe(lease, now)))
    note = not_here(holder, me) if holder is not None else None
    return Decision(WAIT, describe(lease, now) + (" (%s)" % note if note else ""))


def acquired(lease, decision, me, now, name, namespace, duration):
    """The Lease this run writes for a decision other than WAIT (POST for CREATE, PUT otherwise)."""
    stamp = format_time(now)
    metadata = {"name": name, "namespace": namespace,
                "labels": {MANAGED_BY_LABEL: MANAGED_BY}, "annotations": annotations(me)}
    spec = {"holderIdentity": identity(me), "leaseDurationSeconds": int(duration),
            "acquireTime": stamp, "renewTime": stamp, "leaseTransitions": 0}
    if lease is not None:
        live_meta = lease.get("metadata") or {}
        kept = dict((k, v) for k, v in (live_meta.get("annotations") or {}).items()
                    if not k.startswith(ANNOTATION_PREFIX))
        metadata["annotations"].update(kept)
        metadata["labels"] = dict(live_meta.get("labels") or {}, **metadata["labels"])
        metadata["resourceVersion"] = live_meta.get("resourceVersion")
        live = lease.get("spec") or {}
        transitions = int(live.get("leaseTransitions") or 0)
        if decision.action == RENEW:
            spec["acquireTime"] = live.get("acquireTime") or stamp
            spec["leaseTransitions"] = transitions
        else:
            # As client-go's leader election: a new holder counts one transition.
            spec["leaseTransitions"] = transitions + 1
    return {"apiVersion": API_VERSION, "kind": KIND, "metadata": metadata, "spec": spec}


def released(lease, now):
    """The Lease without a holder (client-go's release: holder empty, duration 1 s), same resourceVersion."""
    metadata = dict(lease.get("metadata") or {})
    metadata["annotations"] = dict((k, v) for k, v in (metadata.get("annotations") or {}).items()
                                   if not k.startswith(ANNOTATION_PREFIX))
    stamp = format_time(now)
    spec = dict(lease.get("spec") or {})
    spec.update(holderIdentity=None, leaseDurationSeconds=1, acquireTime=stamp, renewTime=stamp)
    spec = dict((k, v) for k, v in spec.items() if v is not None)
    return {"apiVersion": API_VERSION, "kind": KIND, "metadata": metadata, "spec": spec}


# -- the run on this controller (/proc) ------------------------------------------

def controller_process(pid, cmdline, parent):
    """The pid of the ansible-playbook (or ansible) process a module runs under, None when there is none.

    Ansible's workers are forks of the main process with its command line, so the run is the topmost
    ancestor with the command line of the first ancestor that runs Ansible - pid 1 too, as in a
    container or under unshare --pid --fork. cmdline(pid) -> list of arguments (empty when unknown),
    parent(pid) -> the parent pid (0 at the top).
    """
    current = pid
    found = None
    while current > 0:
        args = cmdline(current)
        if found is None:
            if any(os.path.basename(a) in ("ansible-playbook", "ansible") for a in args[:3]):
                found = (current, args)
        elif args != found[1]:
            break
        else:
            found = (current, args)
        current = parent(current)
    return found[0] if found else None


def proc_cmdline(pid, proc="/proc"):
    try:
        with open(os.path.join(proc, str(pid), "cmdline"), "rb") as handle:
            return [a.decode("utf-8", "replace") for a in handle.read().split(b"\0") if a]
    except (IOError, OSError):
        return []


def _stat_fields(pid, proc):
    with open(os.path.join(proc, str(pid), "stat"), "r") as handle:
        text = handle.read()
    # The command name is in parentheses and may hold spaces: fields start after the last ")".
    return text[text.rindex(")") + 2:].split()


def proc_parent(pid, proc="/proc"):
    try:
        return int(_stat_fields(pid, proc)[1])
    except (IOError, OSError, ValueError, IndexError):
        return 0


def proc_started(pid, proc="/proc"):
    """The process's start time in clock ticks after boot (field 22 of stat), None when unknown."""
    try:
        return _stat_fields(pid, proc)[19]
    except (IOError, OSError, ValueError, IndexError):
        return None


def proc_boot_id(proc="/proc"):
    """The kernel's boot_id (random at every boot, the same in every container of the host), None when unknown."""
    try:
        with open(os.path.join(proc, "sys", "kernel", "random", "boot_id"), "r") as handle:
            return handle.read().strip() or None
    except (IOError, OSError):
        return None


def proc_pid_namespace(proc="/proc"):
    """This process's PID namespace as the kernel names it ("pid:[4026531836]"), None when unknown.

    None also when proc is the /proc of another PID namespace (its "self" is not this pid): its pids
    are not the ones this process sees, so none of them can be looked at.
    """
    try:
        if int(os.readlink(os.path.join(proc, "self"))) != os.getpid():
            return None
        return os.readlink(os.path.join(proc, "self", "ns", "pid")) or None
    except (IOError, OSError, ValueError):
        return None


def proc_alive(holder, proc="/proc"):
    """True/False: the holder's process runs on this host (same pid and start time); None: cannot tell."""
    if not os.path.isdir(proc) or not os.path.exists(os.path.join(proc, "self")):
        return None
    started = proc_started(holder.pid, proc)
    if started is None:
        return False
    return not holder.started or str(holder.started) == str(started)
