# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The part of the Cloud Storage JSON API the collection uses, as the Compute API emulator serves it
(compute_api.py routes to it):

    POST /upload/storage/v1/b/BUCKET/o?uploadType=media&name=NAME[&ifGenerationMatch=G]   the object's bytes
    GET  /storage/v1/b/BUCKET/o/NAME[?generation=G][&ifGenerationMatch=G]                   its metadata
    GET  /storage/v1/b/BUCKET/o/NAME?alt=media[&generation=G]                               its bytes
    GET  /storage/v1/b/BUCKET/o[?prefix=P][&maxResults=N][&pageToken=T]                    a listing

Every write gives the object a new generation, higher than any before; ifGenerationMatch (0: the object
must not exist) is refused with 412 conditionNotMet in Cloud Storage's own words, and checked and applied
under one lock, so that of two writers over one generation exactly one wins. Only the live generation is
kept (a bucket without versioning): asking for another is 404. The project's emulator implements these
preconditions because the Cloud Storage emulator on PyPI (gcp-storage-emulator) does not.

Buckets come from the fixture's ``buckets`` ({name: {"forbidden": bool}}); any other bucket is 404, a
forbidden one 403, as the API answers a caller without the permission. The emulator's transient faults
(fail_first, reset_first) apply here as to every API call. Stored objects are listed at GET
/_emulator/objects, bytes base64-encoded, for the tests to compare."""

from __future__ import absolute_import, division, print_function

import base64
import hashlib
import threading
import time

# generations rise across every object and every emulator in this process, as Cloud Storage's
# (microseconds since the epoch) do
_GENERATION = {"last": 0}
_GENERATION_LOCK = threading.Lock()
PRECONDITION = "At least one of the pre-conditions you specified did not hold."


def _next_generation():
    with _GENERATION_LOCK:
        _GENERATION["last"] = max(int(time.time() * 1000000), _GENERATION["last"] + 1)
        return _GENERATION["last"]


def _bucket_problem(state, bucket, permission):
    if bucket not in state.buckets:
        return error(404, "notFound", "The specified bucket does not exist.")
    if (state.buckets[bucket] or {}).get("forbidden"):
        return error(403, "forbidden", "Caller does not have %s access to the Google Cloud Storage object. "
                                       "Permission '%s' denied on resource." % (permission, permission))
    return None


def _precondition(query, current):
    """None when the request's ifGenerationMatch holds for the object (None: absent), else the answer."""
    if "ifGenerationMatch" not in query:
        return None
    wanted = query["ifGenerationMatch"]
    if not wanted.isdigit():
        return error(400, "invalid", "Invalid argument for ifGenerationMatch: %s" % wanted)
    have = int(current["generation"]) if current else 0
    if int(wanted) != have:
        return 412, {"error": {"code": 412, "message": PRECONDITION, "errors": [
            {"message": PRECONDITION, "domain": "global", "reason": "conditionNotMet", "locationType": "header",
             "location": "If-Match"}]}}
    return None


def _metadata(obj):
    meta = dict((k, v) for k, v in obj.items() if k != "data")
    meta.update(kind="storage#object", size=str(obj["size"]),
                id="%s/%s/%s" % (obj["bucket"], obj["name"], obj["generation"]),
                selfLink="https://www.googleapis.com/storage/v1/b/%s/o/%s" % (obj["bucket"], obj["name"]))
    return meta


def upload(handler, bucket, query, body):
    """Store one object; returns (status, JSON body) as the API answers."""
    state = handler.state
    problem = _bucket_problem(state, bucket, "storage.objects.create")
    if problem:
        return problem
    if query.get("uploadType") != "media":
        return error(400, "invalid", "Upload requests must include an uploadType URL parameter.")
    name = query.get("name") or ""
    if not name or "\n" in name or "\r" in name or len(name.encode("utf-8")) > 1024:
        return error(400, "invalid", "Invalid object name.")
    md5 = base64.b64encode(hashlib.md5(body).digest()).decode("ascii")
    with state.lock:
        refused = _precondition(query, state.objects.get((bucket, name)))
        if refused:
            return refused
        obj = {"bucket": bucket, "name": name, "size": len(body), "md5Hash": md5,
               "generation": str(_next_generation()),
               "contentType": handler.headers.get("Content-Type") or "application/octet-stream",
               "data": base64.b64encode(body).decode("ascii")}
        state.objects[(bucket, name)] = obj
    return 200, _metadata(obj)


def get(handler, bucket, name, query):
    """An object's metadata, or with alt=media its bytes: (status, JSON body or bytes)."""
    state = handler.state
    problem = _bucket_problem(state, bucket, "storage.objects.get")
    if problem:
        return problem
    with state.lock:
        obj = state.objects.get((bucket, name))
        obj = dict(obj) if obj else None
    if obj is None or ("generation" in query and query["generation"] != obj["generation"]):
        return error(404, "notFound", "No such object: %s/%s" % (bucket, name))
    refused = _precondition(query, obj)
    if refused:
        return refused
    if query.get("alt") == "media":
        return 200, base64.b64decode(obj["data"])
    return 200, _metadata(obj)


def list_objects(handler, bucket, query):
    """objects.list: the objects under prefix, in name order, maxResults a page (1000 at most)."""
    state = handler.state
    problem = _bucket_problem(state, bucket, "storage.objects.list")
    if problem:
        return problem
    prefix = query.get("prefix") or ""
    try:
        size = min(1000, int(query.get("maxResults") or 1000))
        start = int(query.get("pageToken") or 0)
    except ValueError:
        return error(400, "invalid", "Invalid maxResults or pageToken.")
    with state.lock:
        names = sorted(n for (b, n) in state.objects if b == bucket and n.startswith(prefix))
        page = [_metadata(state.objects[(bucket, n)]) for n in names[start:start + size]]
    out = {"kind": "storage#objects", "items": page}
    if start + size < len(names):
        out["nextPageToken"] = str(start + size)
    return 200, out


def listing(state):
    with state.lock:
        return [dict(v) for _k, v in sorted(state.objects.items())]


def error(code, reason, message):
    return code, {"error": {"code": code, "message": message, "errors": [{"reason": reason, "message": message}]}}
