# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the gcs_upload action sends to Cloud Storage: the files of a report directory as objects
under a prefix, each checked against what the JSON API says it stored, and the links a run's
summary carries. Controller-side only; pure Python but for upload_all, which uses a ComputeClient.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import hashlib
import os
import re

try:
    from urllib.parse import quote
except ImportError:  # pragma: no cover - Python 2
    from urllib import quote

DEFAULT_ENDPOINT = "https://storage.googleapis.com"
WRITE_SCOPES = ["https://www.googleapis.com/auth/devstorage.read_write"]
CONTENT_TYPES = {".json": "application/json", ".xml": "application/xml", ".html": "text/html; charset=utf-8",
                 ".txt": "text/plain; charset=utf-8", ".log": "text/plain; charset=utf-8"}
# Cloud Storage's bucket naming rules, for names without dots (dotted names are domain-verified)
_BUCKET_RULE = re.compile(r"^[a-z0-9][a-z0-9_-]{1,61}[a-z0-9]$")
# what an object name may not hold: control characters (CR and LF among them) and the name ".."
_BAD_NAME = re.compile(r"[\x00-\x1f\x7f]")


class UploadError(Exception):
    """One line naming the bucket, prefix or file at fault."""


def valid_bucket(bucket):
    """The bucket name, or UploadError naming it: 3 to 63 lowercase letters, digits, - and _, no
    "goog" prefix."""
    if not isinstance(bucket, str) or not _BUCKET_RULE.match(bucket) or bucket.startswith("goog"):
        raise UploadError("bucket %r is not a valid Cloud Storage bucket name (3 to 63 characters: lowercase "
                          "letters, digits, - and _; not starting with goog)" % (bucket,))
    return bucket


def valid_prefix(prefix):
    """The object prefix without leading or trailing slashes, or UploadError naming it."""
    text = (prefix or "").strip("/")
    parts = text.split("/") if text else []
    if _BAD_NAME.search(text) or any(p in ("", ".", "..") for p in parts):
        raise UploadError("prefix %r is not a usable object name prefix (no control characters, empty, . or .. "
                          "parts)" % (prefix,))
    return text


def plan(src, prefix, walk=os.walk):
    """The regular files under src, each as {path, name, content_type}, in name order; src may also be
    one regular file (an archive, an audit log), named prefix/<its name>.

    Objects are named prefix/<src's own name>/<path under src>, so every run keeps its own folder.
    Symbolic links are not followed: a link in a report directory could point anywhere."""
    base = os.path.basename(os.path.normpath(src))
    if not os.path.islink(src) and os.path.isfile(src):
        return [_object(src, "/".join(p for p in (valid_prefix(prefix), base) if p))]
    if os.path.islink(src) or not os.path.isdir(src):
        raise UploadError("src %s is not a directory or a regular file" % src)
    out = []
    for root, dirs, files in walk(src):
        dirs[:] = sorted(d for d in dirs if not os.path.islink(os.path.join(root, d)))
        for name in files:
            path = os.path.join(root, name)
            if os.path.islink(path) or not os.path.isfile(path):
                continue
            rel = os.path.relpath(path, src).replace(os.sep, "/")
            out.append(_object(path, "/".join(p for p in (valid_prefix(prefix), base, rel) if p)))
    return sorted(out, key=lambda o: o["name"])


def _object(path, obj):
    if _BAD_NAME.search(obj) or len(obj.encode("utf-8")) > 1024:
        raise UploadError("file %s cannot be an object name (control characters, or over 1024 bytes)" % path)
    return {"path": path, "name": obj,
            "content_type": CONTENT_TYPES.get(os.path.splitext(path)[1].lower(), "application/octet-stream")}


def links(bucket, name):
    """The object as gs:// URI (gcloud, gsutil) and as the console's authenticated download URL."""
    return {"uri": "gs://%s/%s" % (bucket, name),
            "url": "https://storage.cloud.google.com/%s/%s" % (bucket, quote(name, safe="/"))}


def upload_url(endpoint, bucket):
    return "%s/upload/storage/v1/b/%s/o" % ((endpoint or DEFAULT_ENDPOINT).rstrip("/"), quote(bucket, safe=""))


def md5_b64(data):
    """The MD5 of data as the JSON API writes md5Hash (base64)."""
    return base64.b64encode(hashlib.md5(data).digest()).decode("ascii")


def upload_all(client, endpoint, bucket, objects, read=None):
    """Upload each planned object; returns [{name, size, generation, uri, url}]. An object the API
    stored with another MD5 than the file's is an UploadError (a damaged upload is not a report)."""
    read = read or _read
    url = upload_url(endpoint, bucket)
    out = []
    for obj in objects:
        data = read(obj["path"])
        what = "uploading %s to bucket %s" % (obj["name"], bucket)
        stored = client.upload(url, {"uploadType": "media", "name": obj["name"]}, data, obj["content_type"],
                               what=what, permission="storage.objects.create on bucket %s" % bucket) or {}
        if stored.get("md5Hash") and stored["md5Hash"] != md5_b64(data):
            raise UploadError("%s: the stored object's MD5 differs from the file's" % what)
        item = {"name": obj["name"], "size": len(data), "generation": str(stored.get("generation") or "")}
        item.update(links(bucket, obj["name"]))
        out.append(item)
    return out


def _read(path):
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except (IOError, OSError) as exc:
        raise UploadError("file %s cannot be read: %s" % (path, exc.strerror or exc))
