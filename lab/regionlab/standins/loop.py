"""The reconcile loop the stand-ins share: woken by watches and timed steps, with a slow resync."""

import os
import sys
import threading
import time
import traceback
from datetime import datetime, timezone

from .. import processes
from . import settings
from .client import path

# Watches wake the loop on every change and timed steps set their own wake-up; the resync only
# covers a watch that broke unnoticed.
RESYNC = 10.0
# A pass longer than this is logged: timed steps fall behind by as much.
SLOW_PASS = 3.0


def log(message):
    sys.stdout.write("%s %s\n" % (datetime.now().strftime("%H:%M:%S.%f")[:-3], message))
    sys.stdout.flush()


def now_rfc3339():
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def event(kube, obj, reason, message, event_type="Normal", component=None, name=None):
    """A core/v1 Event about obj, as a controller's recorder writes it (name: a fixed one, so it is written once)."""
    meta = obj["metadata"]
    now = now_rfc3339()
    metadata = {"name": name, "namespace": meta["namespace"]} if name else \
        {"generateName": meta["name"] + ".", "namespace": meta["namespace"]}
    kube.create(path("v1", "events", meta["namespace"]), {
        "apiVersion": "v1", "kind": "Event", "metadata": metadata,
        "involvedObject": {"apiVersion": obj.get("apiVersion"), "kind": obj.get("kind"), "name": meta["name"],
                           "namespace": meta["namespace"], "uid": meta["uid"],
                           "resourceVersion": meta.get("resourceVersion")},
        "reason": reason, "message": message, "type": event_type, "count": 1,
        "source": {"component": component or kube.manager}, "firstTimestamp": now, "lastTimestamp": now})


def owner_reference(obj, controller=True):
    """An owner reference to obj, a custom resource as read (it carries apiVersion and kind), as a controller sets it
    on what it makes (controllerutil.SetControllerReference: controller and blockOwnerDeletion)."""
    meta = obj["metadata"]
    return {"apiVersion": obj["apiVersion"], "kind": obj["kind"], "name": meta["name"], "uid": meta["uid"],
            "controller": controller, "blockOwnerDeletion": True}


def ready_file(name):
    return processes.RUN / ("%s.ready" % name)


def is_ready(name):
    """The process runs and has finished a first full pass."""
    pid = processes.pid_of(name)
    try:
        return bool(pid) and ready_file(name).read_text().strip() == str(pid)
    except OSError:
        return False


class Controller:
    """Subclasses implement reconcile() and set `name`; step timing goes through after()."""

    name = "standin"

    def __init__(self):
        self.wake = threading.Event()
        self.timers = {}
        self.next_due = RESYNC
        self.settings = settings.standins(log)
        self.log = log

    # Timed steps ---------------------------------------------------------------

    def after(self, key, delay):
        """True once `delay` seconds have passed since the first call for key; else plan a wake-up."""
        now = time.monotonic()
        start = self.timers.setdefault(key, now)
        left = start + delay - now
        if left <= 0:
            return True
        self.next_due = min(self.next_due, left)
        return False

    def done(self, key):
        self.timers.pop(key, None)

    def prune(self, live_uids):
        """Forget the timers of objects that are gone (keys start with the object's uid)."""
        for key in [k for k in self.timers if k[0] not in live_uids]:
            del self.timers[key]

    def delay(self, name):
        return self.settings.get().delay(name)

    def watched_files(self):
        """The settings files a pass reads (refreshed at its start)."""
        return [self.settings]

    # Loop ----------------------------------------------------------------------

    def reconcile(self):
        raise NotImplementedError

    def _wait(self, seconds):
        """Wait for a watch event or the timeout; a changed settings file ends the wait too."""
        deadline = time.monotonic() + seconds
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or self.wake.wait(min(left, 0.25)) or any(w.changed() for w in self.watched_files()):
                return

    def one_pass(self):
        """The settings files as they are now (the whole pass sees this version; _wait ends for a later
        change), then reconcile."""
        self.wake.clear()
        self.next_due = RESYNC
        for watched in self.watched_files():
            watched.refresh()
        self.reconcile()

    def run(self):
        log("%s: started (pid %d)" % (self.name, os.getpid()))
        first = True
        while True:
            began = time.monotonic()
            try:
                self.one_pass()
                if first:
                    ready_file(self.name).write_text("%d\n" % os.getpid())
                    first = False
            except Exception:  # noqa: BLE001 -- a stand-in keeps running and tries again
                log("%s: pass failed:\n%s" % (self.name, traceback.format_exc()))
                self.next_due = 1.0
            took = time.monotonic() - began
            if took > SLOW_PASS:
                log("%s: a pass took %.1fs" % (self.name, took))
            self._wait(self.next_due)
            time.sleep(0.02)  # let a burst of events settle into one pass


def set_condition(conditions, ctype, status, reason, message, observed_generation=None, now=None,
                  update_time=False):
    """Upsert a condition in place; lastTransitionTime moves only when the status changes.

    update_time: Gardener's conditions also carry lastUpdateTime, moved when anything changed.
    Returns True when something changed.
    """
    now = now or now_rfc3339()
    for cond in conditions:
        if cond.get("type") == ctype:
            changed = (cond.get("status"), cond.get("reason"), cond.get("message")) != (status, reason, message)
            if cond.get("status") != status:
                cond["lastTransitionTime"] = now
            if changed and update_time:
                cond["lastUpdateTime"] = now
            cond.update(status=status, reason=reason, message=message)
            if observed_generation is not None and cond.get("observedGeneration") != observed_generation:
                cond["observedGeneration"] = observed_generation
                changed = True
            return changed
    cond = {"type": ctype, "status": status, "lastTransitionTime": now, "reason": reason, "message": message}
    if update_time:
        cond["lastUpdateTime"] = now
    if observed_generation is not None:
        cond["observedGeneration"] = observed_generation
    conditions.append(cond)
    return True


def status_writers(obj):
    """Field managers that wrote the object's status subresource."""
    return {entry.get("manager") for entry in obj["metadata"].get("managedFields") or []
            if entry.get("subresource") == "status"}


def foreign(obj, manager):
    """Someone else writes this object's status (a test playing the operator): leave it alone."""
    return bool(status_writers(obj) - {manager})
