# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the tests of the rulebooks' event source share: a free loopback port to run it on, and a webhook
post to it answered with the HTTP status (an error status is an answer, not an exception)."""

from __future__ import absolute_import, division, print_function

import socket
import urllib.error
import urllib.request


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def post(port, body, token=None, content_type=None):
    """POST body (bytes) to the source on 127.0.0.1:port; the status it answers."""
    request = urllib.request.Request("http://127.0.0.1:%d/gpudirect" % port, data=body, method="POST")
    if content_type:
        request.add_header("Content-Type", content_type)
    if token:
        request.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(request, timeout=5) as answer:
            return answer.status
    except urllib.error.HTTPError as exc:
        return exc.code
