# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where the fleet ledger (ledger.py) is kept, named by one setting (the store):

  - a path on the controller: one JSON file, locked (flock) from read to write, made 0600 in a 0700 directory
    and never opened through a link (the remediation guard's StateFile, remediation/guard_store.py). Enough
    for one controller and for the inventory, which reads it.
  - gs://BUCKET/OBJECT (gs://BUCKET: the object DEFAULT_OBJECT): one Cloud Storage object, written only over
    the generation it was read at (ifGenerationMatch, guard_store.CloudObjects), so that it outlives every AWX
    job. When another run wrote it first (HTTP 412), the ledger is read again and the change applied again to
    what that run wrote: adding a record twice adds it once, so nothing is lost and nothing doubled.

A change is a pure function of the ledger as read (update()): it adds records and applies retention and the
size bound, on every write. In check mode (dry) the ledger is read and the change computed; nothing is
written, and a missing local file is not made.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import random
import time

from ansible_collections.gpudirect.gcp.plugins.plugin_utils.fleet import ledger
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.gce import gce_api, gcs_upload
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.remediation import guard_store

SCHEME = "gs://"
DEFAULT_OBJECT = "gpudirect-gcp/fleet/ledger.json"
# one error for a store: the shared books' (a setting, a file, an object the message names)
StoreError = guard_store.StoreError


def parse(store):
    """("file", path) or ("object", bucket, object name) of a store setting; StoreError names it."""
    if not isinstance(store, str) or not store.strip():
        raise StoreError("the fleet ledger's store is empty: give a path on the controller or gs://BUCKET/OBJECT")
    store = store.strip()
    if not store.startswith(SCHEME):
        return ("file", os.path.abspath(os.path.expanduser(store)))
    bucket, _sep, name = store[len(SCHEME):].partition("/")
    try:
        bucket = gcs_upload.valid_bucket(bucket)
        name = gcs_upload.valid_prefix(name) or DEFAULT_OBJECT
    except gcs_upload.UploadError as exc:
        raise StoreError("fleet ledger store %s: %s" % (store, exc))
    return ("object", bucket, name)


def _where(location):
    return "fleet ledger %s" % location


class LocalLedger(object):
    """The ledger in one file on the controller."""

    def __init__(self, path):
        self.path = self.location = path
        self.warnings = []

    def _file(self, create):
        return guard_store.StateFile(self.path, create=create, what="fleet ledger file",
                                     fix="to let the ledger be kept again")

    def read(self):
        """The ledger as stored ({} where the file is absent): nothing made, nothing changed."""
        with self._file(False) as handle:
            return handle.read()

    def update(self, change, dry):
        """change(the ledger as read) -> (the ledger to write, or None: unchanged; out), under the lock; written
        unless dry. Returns (out, retries)."""
        with self._file(not dry) as handle:
            new, out = change(handle.read())
            if not dry and new is not None:
                handle.write(new)
        return out, 0

    def close(self):
        pass


class CloudLedger(guard_store.CloudObjects):
    """The ledger as one Cloud Storage object, written over the generation it was read at."""

    def __init__(self, client, endpoint, bucket, name, sleep=time.sleep, tries=guard_store.CAS_TRIES):
        super(CloudLedger, self).__init__(client, endpoint, bucket, tries)
        self.name, self.sleep = name, sleep
        self.location = self.uri(name)
        self.warnings = []

    def read(self):
        return self.read_object(self.name, "fleet ledger object")[0]

    def update(self, change, dry):
        """As LocalLedger.update: when another run wrote the object first, read it again and apply the change
        again to what it wrote. Returns (out, retries)."""
        for attempt in range(self.tries):
            doc, generation = self.read_object(self.name, "fleet ledger object")
            new, out = change(doc)
            if dry or new is None or self._put(self.name, new, generation, "fleet ledger object"):
                return out, attempt
            self.sleep(random.uniform(0.5, 1.0) * guard_store.CAS_BACKOFF * (2 ** min(attempt, 5)))
        raise StoreError("fleet ledger object %s: another run wrote it first on each of %d tries; nothing was "
                         "recorded" % (self.location, self.tries))


def store_for(args, environ):
    """The store the action's arguments name (store, and the gce_auth options and storage_endpoint for an
    object). StoreError names the setting at fault."""
    where = parse(args.get("store"))
    if where[0] == "file":
        return LocalLedger(where[1])
    _kind, bucket, name = where
    missing = gce_api.check_dependencies()
    if missing:
        raise StoreError("fleet ledger store gs://%s/%s: %s" % (bucket, name, missing))
    gce_api.auth_from_env(args, environ)
    endpoint = (args.get("storage_endpoint") or environ.get("GCP_STORAGE_API_ENDPOINT")
                or gcs_upload.DEFAULT_ENDPOINT).rstrip("/")
    try:
        client = guard_store.storage_client(args, endpoint)
    except gce_api.GceApiError as exc:
        raise StoreError("fleet ledger store gs://%s/%s: %s" % (bucket, name, exc))
    store = CloudLedger(client, endpoint, bucket, name)
    store.warnings = gce_api.auth_warnings(args["auth_kind"], endpoint, args.get("service_account_file"))
    return store


def recorder(new, now, bounds, problems=None):
    """The change that adds the records new to a ledger and applies retention (bounds: max_age_days,
    max_records, max_bytes): change(doc) -> (the ledger to write or None, {added, skipped, dropped, records}).
    problems: lines about records left out before (their VM has no physical host), reported with the rest."""

    def change(doc):
        records, skipped = ledger.load(doc, "the stored ledger")
        merged, added, bad = ledger.add(records, new)
        kept, dropped = ledger.retain(merged, now, **bounds)
        # a new record older than the bounds keep is dropped at once: it is no record added
        still = set(id(r) for r in kept)
        out = {"added": [r for r in added if id(r) in still], "skipped": skipped + bad + list(problems or []),
               "dropped": dropped, "records": len(kept)}
        # a stored record of another shape is left out of what is written (named in skipped)
        return (ledger.document(kept) if kept != records or skipped else None), out

    return change


def read_records(path):
    """(records, [one line per record skipped]) of a local ledger, read only (the inventory's): ([], []) where
    the file is absent. StoreError or LedgerError names a file that cannot be read."""
    doc = LocalLedger(path).read()
    return ledger.load(doc, _where(path))
