# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Cloud Storage JSON API's media upload, as the Compute API emulator serves it (compute_api.py
routes to it): POST /upload/storage/v1/b/BUCKET/o?uploadType=media&name=NAME with the object's bytes.

Buckets come from the fixture's ``buckets`` ({name: {"forbidden": bool}}); any other bucket is 404,
a forbidden one 403, as the API answers a caller without storage.objects.create. The emulator's
transient faults (fail_first, reset_first) apply to uploads as to every API call. Stored objects are
listed at GET /_emulator/objects, bytes base64-encoded, for the tests to compare."""

from __future__ import absolute_import, division, print_function

import base64
import hashlib


def upload(handler, bucket, query, body):
    """Store one object; returns (status, JSON body) as the API answers."""
    state = handler.state
    buckets = state.buckets
    if bucket not in buckets:
        return error(404, "notFound", "The specified bucket does not exist.")
    if (buckets[bucket] or {}).get("forbidden"):
        return error(403, "forbidden", "Caller does not have storage.objects.create access to the Google Cloud "
                                       "Storage object. Permission 'storage.objects.create' denied on resource.")
    if query.get("uploadType") != "media":
        return error(400, "invalid", "Upload requests must include an uploadType URL parameter.")
    name = query.get("name") or ""
    if not name or "\n" in name or "\r" in name or len(name.encode("utf-8")) > 1024:
        return error(400, "invalid", "Invalid object name.")
    md5 = base64.b64encode(hashlib.md5(body).digest()).decode("ascii")
    with state.lock:
        generation = str(len(state.objects) + 1700000000000000)
        state.objects[(bucket, name)] = {
            "bucket": bucket, "name": name, "size": len(body), "md5Hash": md5, "generation": generation,
            "contentType": handler.headers.get("Content-Type") or "application/octet-stream",
            "data": base64.b64encode(body).decode("ascii")}
    return 200, {"kind": "storage#object", "bucket": bucket, "name": name, "size": str(len(body)), "md5Hash": md5,
                 "generation": generation, "id": "%s/%s/%s" % (bucket, name, generation),
                 "selfLink": "https://www.googleapis.com/storage/v1/b/%s/o/%s" % (bucket, name)}


def listing(state):
    with state.lock:
        return [dict(v) for _k, v in sorted(state.objects.items())]


def error(code, reason, message):
    return code, {"error": {"code": code, "message": message, "errors": [{"reason": reason, "message": message}]}}
