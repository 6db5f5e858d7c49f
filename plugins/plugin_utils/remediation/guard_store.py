# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where the remediation guard keeps its books - the runs (state) and the audit of every decision.

Two kinds, one contract (settle: read the state, decide, log the decisions, then write the state):
  - LocalBooks: a state file and a JSON-lines audit log on the controller, the state file locked (flock)
    from read to write. Enough for one controller; an AWX job's home is gone when the job ends.
  - CloudBooks: objects in a Cloud Storage bucket, <prefix>/state.json and one audit object per decision
    batch, <prefix>/audit/<UTC time, to the microsecond>-<batch>.jsonl, so the books outlive every job and
    every job sees the others'. The state is written only if it is still the generation the decision was made on
    (ifGenerationMatch); when another job wrote it first (HTTP 412) the decisions are decided again on
    what it wrote, so two jobs never both take the last slot of a cap.

The machinery is shared with the fleet ledger (plugin_utils/fleet/ledger_store.py): StateFile (what the messages
call the file is its what) and CloudObjects, one JSON object read with its generation and written over it.

In both the audit is written before the state: a decision that cannot be logged changes nothing. In the
bucket, a batch whose state write lost the race is followed by an audit object saying so (decision
"retried", naming the batch): its lines were logged, never kept. Every line of a cloud batch carries its
"batch" id.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import fcntl
import json
import os
import random
import stat
import time
import uuid

try:
    from urllib.parse import quote
except ImportError:  # pragma: no cover - Python 2
    from urllib import quote

from ansible_collections.gpudirect.gcp.plugins.plugin_utils.gce import gce_api, gcs_upload

DEFAULT_PREFIX = "gpudirect-gcp/remediate"
# how often a decision is made again when another job wrote the state first; six jobs deciding in the
# same second settle within a few
CAS_TRIES = 8
# the first wait after a lost race (s), doubling, with jitter so the losers do not meet again
CAS_BACKOFF = 0.05


class StoreError(Exception):
    """A setting, a file or an object of durable books (the guard's, the fleet ledger's) that cannot be used;
    the message names it."""


# the guard's name for it
GuardError = StoreError


def _check_directory(what, path, directory):
    """GuardError unless directory is the running user's (or root's) and no one else may write it:
    whoever may write it may put a link or a file of theirs where the guard's file is."""
    try:
        info = os.stat(directory)
    except OSError as exc:
        raise GuardError("%s %s: its directory %s: %s" % (what, path, directory, exc.strerror or exc))
    if not stat.S_ISDIR(info.st_mode):
        raise GuardError("%s %s: %s is not a directory" % (what, path, directory))
    if info.st_uid not in (os.geteuid(), 0):
        raise GuardError("%s %s: its directory %s belongs to uid %d, not to root or the user running the guard (uid %d)"
                         % (what, path, directory, info.st_uid, os.geteuid()))
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise GuardError("%s %s: its directory %s is writable by group or others (mode %04o); make it 0700"
                         % (what, path, directory, stat.S_IMODE(info.st_mode)))


def _why_not(what, path, exc):
    """The one line for a file that would not open: a link and what is not a file said as such."""
    try:
        info = os.lstat(path)
    except OSError:
        info = None
    if info is not None and stat.S_ISLNK(info.st_mode):
        return GuardError("%s %s is a symbolic link; the guard follows none: make it a file of its own" % (what, path))
    if info is not None and not stat.S_ISREG(info.st_mode):
        return GuardError("%s %s is not a regular file" % (what, path))
    return GuardError("%s %s: %s" % (what, path, exc.strerror or exc))


def open_own(what, path, flags, create=True):
    """A descriptor of the regular file at path, opened with flags, never through a symbolic link;
    the file must be the running user's and writable by no one else, in a directory the same holds for
    (made 0700 where missing). Where the file is absent it is made 0600, or None is returned when not
    create. GuardError names the file in one line."""
    directory = os.path.dirname(path) or "."
    if not os.path.isdir(directory):
        if not create:
            return None
        try:
            os.makedirs(directory, 0o700)
        except OSError as exc:
            raise GuardError("%s %s: cannot make its directory: %s" % (what, path, exc.strerror or exc))
    _check_directory(what, path, directory)
    # O_NONBLOCK: a FIFO put there must not hang the guard; it is refused below
    flags |= os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        try:
            descriptor = os.open(path, flags)
        except OSError as exc:
            if exc.errno != errno.ENOENT:
                raise
            if not create:
                return None
            try:
                descriptor = os.open(path, flags | os.O_CREAT | os.O_EXCL, 0o600)
            except OSError as exc:
                if exc.errno != errno.EEXIST:
                    raise
                # made by someone else since: open what is there, and judge it below
                descriptor = os.open(path, flags)
    except OSError as exc:
        raise _why_not(what, path, exc)
    info = os.fstat(descriptor)
    problem = None
    if not stat.S_ISREG(info.st_mode):
        problem = "%s %s is not a regular file" % (what, path)
    elif info.st_uid != os.geteuid():
        problem = "%s %s belongs to uid %d, not to the user running the guard (uid %d)" % (
            what, path, info.st_uid, os.geteuid())
    elif info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        problem = "%s %s is writable by group or others (mode %04o); make it 0600" % (
            what, path, stat.S_IMODE(info.st_mode))
    if problem:
        os.close(descriptor)
        raise GuardError(problem)
    return descriptor


class StateFile(object):
    """The state file, locked (flock on the file itself) from read to write: two remediations deciding
    at once see each other. With create false (check mode) a missing file reads as no runs and nothing
    is made. Opened only through open_own: no link, no file or directory others may write."""

    def __init__(self, path, create=True, check=None, what="state file", fix="to let remediation go on"):
        self.path, self.handle, self.create, self.check = path, None, create, check
        # what the messages call the file, and what repairing it lets go on
        self.what, self.fix = what, fix

    def __enter__(self):
        descriptor = open_own(self.what, self.path, os.O_RDWR, self.create)
        if descriptor is None:
            return self
        self.handle = os.fdopen(descriptor, "r+")
        fcntl.flock(self.handle, fcntl.LOCK_EX)
        return self

    def read(self):
        """The state as read ({} where the file is absent or empty), judged by check."""
        if self.handle is None:
            return {}
        self.handle.seek(0)
        try:
            text = self.handle.read()
        except (OSError, UnicodeError) as exc:
            raise GuardError("%s %s: cannot read it: %s" % (self.what, self.path, getattr(exc, "strerror", None) or exc))
        if not text.strip():
            return {}
        try:
            state = json.loads(text)
        except ValueError:
            raise GuardError("%s %s is not JSON: remove it, or repair it, %s" % (self.what, self.path, self.fix))
        if self.check is not None:
            self.check(state, "%s %s" % (self.what, self.path))
        return state

    def write(self, state):
        try:
            self.handle.seek(0)
            self.handle.truncate()
            self.handle.write(json.dumps(state, sort_keys=True) + "\n")
            self.handle.flush()
            os.fsync(self.handle.fileno())
        except OSError as exc:
            raise GuardError("%s %s: cannot write it: %s" % (self.what, self.path, exc.strerror or exc))

    def __exit__(self, *exc):
        if self.handle is not None:
            fcntl.flock(self.handle, fcntl.LOCK_UN)
            self.handle.close()


def audit(path, lines):
    """Append JSON lines to the audit log (made 0600 where new; refused as open_own says)."""
    descriptor = open_own("audit log", path, os.O_WRONLY | os.O_APPEND)
    try:
        with os.fdopen(descriptor, "a") as handle:
            # one write: a line is never half there while another call appends
            handle.write("".join(json.dumps(line, sort_keys=True) + "\n" for line in lines))
    except OSError as exc:
        raise GuardError("audit log %s: cannot write it: %s" % (path, exc.strerror or exc))


class LocalBooks(object):
    """The books in a state file and an audit log on the controller (state_file, audit_log)."""

    def __init__(self, state_file, audit_log, check=None):
        self.state_file, self.audit_log, self.check = state_file, audit_log, check
        self.location = state_file
        self.warnings = []

    def peek(self):
        """The state, read only: nothing made where it is absent."""
        with StateFile(self.state_file, create=False, check=self.check) as state_file:
            return state_file.read()

    def log(self, lines):
        audit(self.audit_log, lines)
        return lines

    def settle(self, decide, dry):
        """decide(state) -> (lines, out, the state to keep or None), under the lock; the lines logged, then the
        state written, unless dry (check mode: nothing written, nothing made). Returns (lines, out, retries)."""
        with StateFile(self.state_file, create=not dry, check=self.check) as state_file:
            lines, out, keep = decide(state_file.read())
            if not dry:
                audit(self.audit_log, lines)
                if keep is not None:
                    state_file.write(keep)
        return lines, out, 0

    def close(self):
        pass


class StorageClient(gce_api.ComputeClient):
    """gce_api's client (its session, retries, and one-line errors) on the Cloud Storage JSON API's paths."""

    def url(self, path):
        return "%s/%s" % (self.endpoint, path.lstrip("/"))


def storage_client(args, endpoint):
    """A StorageClient from the gce auth options (GceApiError when credentials cannot be built)."""
    creds = gce_api.build_credentials(
        auth_kind=args["auth_kind"], service_account_file=args.get("service_account_file"),
        service_account_contents=args.get("service_account_contents"), access_token=args.get("access_token"),
        impersonate_service_account=args.get("impersonate_service_account"), scopes=gcs_upload.WRITE_SCOPES)
    return StorageClient(creds, endpoint=endpoint, timeout=args.get("timeout") or 30, retries=3)


class CloudObjects(object):
    """JSON objects in one Cloud Storage bucket, each read with its generation and written only over the generation
    it was read at (ifGenerationMatch): what the guard's books and the fleet ledger share."""

    def __init__(self, client, endpoint, bucket, tries=CAS_TRIES):
        self.client, self.endpoint, self.bucket, self.tries = client, endpoint.rstrip("/"), bucket, tries

    def uri(self, name):
        return "gs://%s/%s" % (self.bucket, name)

    def _object_path(self, name):
        return "storage/v1/b/%s/o/%s" % (quote(self.bucket, safe=""), quote(name, safe=""))

    def read_object(self, name, what, check=None):
        """(the object's JSON, its generation): ({}, 0) where there is no such object yet. Metadata first, then
        the bytes of that generation; an object replaced between the two is read again. check(value, where)
        judges what was read."""
        path = self._object_path(name)
        location = self.uri(name)
        permission = "storage.objects.get on bucket %s" % self.bucket
        for _attempt in range(self.tries):
            try:
                meta = self.client.get(path, what="%s %s" % (what, location), permission=permission)
            except gce_api.GceApiError as exc:
                # Cloud Storage says a missing bucket in these words, and a missing object otherwise
                if exc.status == 404 and "bucket does not exist" not in str(exc):
                    return {}, 0
                raise GuardError(str(exc))
            generation = str((meta or {}).get("generation") or "")
            if not generation.isdigit():
                raise GuardError("%s %s: its metadata has no generation" % (what, location))
            try:
                value = self.client.get(path, params={"alt": "media", "generation": generation},
                                        what="%s %s" % (what, location), permission=permission)
            except gce_api.GceApiError as exc:
                if exc.status == 404:
                    continue  # replaced since its metadata was read
                raise GuardError(str(exc))
            if check is not None:
                check(value, "%s %s" % (what, location))
            return value, int(generation)
        raise GuardError("%s %s changed under every one of %d reads" % (what, location, self.tries))

    def _put(self, name, lines_or_state, generation, what):
        """Write one object only where its generation is still generation (0: it must not exist). False when
        it is not (HTTP 412); GuardError names the object for anything else."""
        if isinstance(lines_or_state, list):
            data = "".join(json.dumps(line, sort_keys=True) + "\n" for line in lines_or_state)
        else:
            data = json.dumps(lines_or_state, sort_keys=True) + "\n"
        try:
            self.client.upload(gcs_upload.upload_url(self.endpoint, self.bucket),
                               {"uploadType": "media", "name": name, "ifGenerationMatch": str(generation)},
                               data.encode("utf-8"), "application/json",
                               what="%s %s" % (what, self.uri(name)),
                               permission="storage.objects.create and storage.objects.delete on bucket %s"
                               % self.bucket)
        except gce_api.GceApiError as exc:
            if exc.status == 412:
                return False
            raise GuardError(str(exc))
        return True

    def close(self):
        self.client.close()


class CloudBooks(CloudObjects):
    """The books as objects in a Cloud Storage bucket: <prefix>/state.json, written only over the generation
    it was read at, and <prefix>/audit/<UTC time>-<batch>.jsonl, one object per decision batch."""

    def __init__(self, client, endpoint, bucket, prefix, check=None, sleep=time.sleep, tries=CAS_TRIES):
        super(CloudBooks, self).__init__(client, endpoint, bucket, tries)
        self.prefix, self.check, self.sleep = prefix, check, sleep
        self.state_name = "/".join(p for p in (prefix, "state.json") if p)
        self.location = self.uri(self.state_name)
        self.warnings = []

    def _read(self):
        """(the state, its generation): ({}, 0) where there is no state object yet."""
        return self.read_object(self.state_name, "state object", self.check)

    def _audit_name(self, now, batch, tail=""):
        # to the microsecond: a listing of the audit is in the order it was written, but for jobs at once
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(now)) + ".%06dZ" % int(round(now % 1 * 1000000) % 1000000)
        return "/".join(p for p in (self.prefix, "audit", "%s-%s%s.jsonl" % (stamp, batch, tail)) if p)

    def _log(self, lines, batch, now, tail=""):
        # the name is this batch's own: 412 means an earlier try of this very write landed
        self._put(self._audit_name(now, batch, tail), lines, 0, "audit object")

    def peek(self):
        return self._read()[0]

    def log(self, lines):
        batch = uuid.uuid4().hex[:16]
        lines = [dict(line, batch=batch) for line in lines]
        self._log(lines, batch, time.time())
        return lines

    def settle(self, decide, dry):
        """Read the state and its generation, decide, log the decisions, write the state over that generation;
        when another job wrote it first, say so in the audit and decide again on what it wrote. Returns
        (lines, out, retries)."""
        for attempt in range(self.tries):
            state, generation = self._read()
            lines, out, keep = decide(state)
            if dry:
                return lines, out, attempt
            batch = uuid.uuid4().hex[:16]
            lines = [dict(line, batch=batch) for line in lines]
            now = time.time()
            self._log(lines, batch, now)
            if keep is None:
                return lines, out, attempt
            keep = dict(keep, batch=batch)
            if self._put(self.state_name, keep, generation, "state object"):
                return lines, out, attempt
            if self._read()[0].get("batch") == batch:
                return lines, out, attempt  # written, though its answer was lost and the retry refused
            self._log([{"time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now)), "decision": "retried",
                        "batch": batch, "node": None,
                        "reason": "another remediation wrote %s first (generation %d was read): the decisions of "
                                  "batch %s were not kept, and are made again" % (self.location, generation, batch)}],
                      batch, now, "-retried")
            self.sleep(random.uniform(0.5, 1.0) * CAS_BACKOFF * (2 ** min(attempt, 5)))
        raise GuardError("state object %s: another remediation wrote it first on each of %d tries; nothing was "
                         "started, and every try is in the audit" % (self.location, self.tries))


def books_for(args, environ, check=None):
    """The books the action's arguments name: the bucket where state_bucket is set, else the local files.
    GuardError names the option at fault."""
    bucket = args.get("state_bucket")
    if not bucket:
        if not args.get("state_file") or not args.get("audit_log"):
            raise GuardError("state_file and audit_log are needed where state_bucket is not set")
        return LocalBooks(args["state_file"], args["audit_log"], check)
    try:
        bucket = gcs_upload.valid_bucket(bucket)
        prefix = gcs_upload.valid_prefix(DEFAULT_PREFIX if args.get("state_prefix") is None else args["state_prefix"])
    except gcs_upload.UploadError as exc:
        raise GuardError("state_bucket/state_prefix: %s" % exc)
    missing = gce_api.check_dependencies()
    if missing:
        raise GuardError("state_bucket %s: %s" % (bucket, missing))
    gce_api.auth_from_env(args, environ)
    endpoint = (args.get("storage_endpoint") or environ.get("GCP_STORAGE_API_ENDPOINT")
                or gcs_upload.DEFAULT_ENDPOINT).rstrip("/")
    try:
        client = storage_client(args, endpoint)
    except gce_api.GceApiError as exc:
        raise GuardError("state_bucket %s: %s" % (bucket, exc))
    books = CloudBooks(client, endpoint, bucket, prefix, check)
    books.warnings = gce_api.auth_warnings(args["auth_kind"], endpoint, args.get("service_account_file"))
    return books
