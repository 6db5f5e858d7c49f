# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A node's placement as its metadata server tells it.

The metadata server answers two instance attributes on VMs with placement
data: physical_host_topology (JSON {"cluster", "block", "subBlock", "host"})
and physical_host (/block/sub-block/host).  Every request carries the header
Metadata-Flavor: Google; a 404 means the VM has no such attribute, which is
not an error.  Parsing is topology.from_metadata's; this module only asks and
says which attribute answered.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import http.client
import socket
from urllib.error import HTTPError, URLError

from ansible.module_utils.urls import ConnectionError as UrlsConnectionError
from ansible.module_utils.urls import open_url

from ansible_collections.gpudirect.gcp.plugins.module_utils.host import topology

DEFAULT_URL = "http://metadata.google.internal/computeMetadata/v1"
JSON_ATTRIBUTE = "physical_host_topology"
PATH_ATTRIBUTE = "physical_host"
# the JSON one is read first: it names the cluster too
ATTRIBUTES = (JSON_ATTRIBUTE, PATH_ATTRIBUTE)
HEADERS = {"Metadata-Flavor": "Google"}
# an attribute is a short line; more than this is not a placement
MAX_BYTES = 64 * 1024


class MetadataError(Exception):
    """The metadata server could not be asked or gave an answer that is not a placement; one line."""


def attribute_url(base_url, name):
    """<base>/instance/attributes/<name>, base being the .../computeMetadata/v1 root."""
    return "%s/instance/attributes/%s" % (base_url.rstrip("/"), name)


def read_attribute(base_url, name, timeout, opener=open_url):
    """The attribute's text, or None when the server answers 404 (the VM has no such attribute).

    Raises MetadataError naming the URL when the server cannot be reached, times
    out, or answers anything but 200 or 404."""
    url = attribute_url(base_url, name)
    try:
        # straight to the link-local server: no proxy, no redirect, no .netrc credentials
        resp = opener(url, headers=dict(HEADERS), timeout=timeout, use_proxy=False,
                      follow_redirects="none", use_netrc=False)
        try:
            data = resp.read(MAX_BYTES + 1)
        finally:
            close = getattr(resp, "close", None)
            if close:
                close()
    except HTTPError as exc:
        if exc.code == 404:
            return None
        raise MetadataError("metadata server %s answered HTTP %s %s" % (url, exc.code, _one_line(exc.reason)))
    except URLError as exc:
        raise MetadataError("metadata server %s cannot be reached: %s" % (url, _one_line(exc.reason)))
    except socket.timeout:
        raise MetadataError("metadata server %s did not answer within %s s" % (url, timeout))
    except (UrlsConnectionError, http.client.HTTPException, OSError, ValueError) as exc:
        raise MetadataError("metadata server %s cannot be reached: %s" % (url, _one_line(exc)))
    if len(data) > MAX_BYTES:
        raise MetadataError("metadata server %s answered more than %d bytes, not a placement" % (url, MAX_BYTES))
    try:
        return data.decode("utf-8") if isinstance(data, bytes) else str(data)
    except UnicodeDecodeError:
        raise MetadataError("metadata server %s answered text that is not UTF-8" % url)


def read_attributes(base_url, timeout, opener=open_url):
    """{attribute: text or None} for both placement attributes; raises MetadataError."""
    return dict((name, read_attribute(base_url, name, timeout, opener)) for name in ATTRIBUTES)


def placement(answers):
    """(topology, source) from read_attributes' answers, through topology.from_metadata.

    source is the attribute the placement came from: physical_host_topology when
    its JSON places the node, else physical_host when that does, else None (and
    topology {}).  Raises ValueError naming the attribute when
    physical_host_topology is not a JSON object."""
    answers = answers or {}
    json_text, path_text = answers.get(JSON_ATTRIBUTE), answers.get(PATH_ATTRIBUTE)
    if topology.from_metadata(physical_host_topology=json_text):
        source = JSON_ATTRIBUTE
    elif topology.from_metadata(physical_host=path_text):
        source = PATH_ATTRIBUTE
    else:
        return {}, None
    return topology.from_metadata(physical_host=path_text, physical_host_topology=json_text), source


def unplaced_answers(answers):
    """The attributes that answered but placed nothing, as 'name=value' (for a warning)."""
    return ["%s=%r" % (name, _one_line(answers[name])[:80]) for name in ATTRIBUTES
            if (answers or {}).get(name) not in (None, "")]


def observe(base_url, timeout, expected=None, opener=open_url):
    """Ask the metadata server and compare with an expected placement.

    Returns {topology, source, answers, mismatches, consistent}; raises
    MetadataError (one line naming the URL or the attribute)."""
    answers = read_attributes(base_url, timeout, opener)
    try:
        observed, source = placement(answers)
    except ValueError as exc:
        raise MetadataError("metadata server %s: %s" % (attribute_url(base_url, JSON_ATTRIBUTE), exc))
    mismatches = topology.differences(topology.normalize(expected), observed)
    return {"topology": observed, "source": source, "answers": answers, "mismatches": mismatches,
            "consistent": not mismatches}


def summary(result, expected=None, base_url=DEFAULT_URL):
    """One line for the module's msg."""
    topo, source = result["topology"], result["source"]
    if not topo:
        line = "no placement data from the metadata server %s (%s absent or empty)" % (
            attribute_url(base_url, ""), " and ".join(ATTRIBUTES))
        if topology.normalize(expected):
            line += "; the expected placement cannot be checked"
        return line
    where = "/".join(topo[level] for level in topology.LEVELS if topo.get(level))
    line = "placed at %s (from %s)" % (where, source)
    if result["mismatches"]:
        return "%s; differs from the expected placement: %s" % (line, "; ".join(result["mismatches"]))
    if topology.normalize(expected):
        return "%s; matches the expected placement" % line
    return line


def _one_line(value):
    return " ".join(str(value).split())
