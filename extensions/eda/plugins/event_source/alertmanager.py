# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpudirect.gcp.alertmanager: Alertmanager's webhooks as ansible-rulebook events.

The events have the shape of ansible.eda.alertmanager's (that collection is not on PyPI): for each
alert of a webhook, {"alert": <the alert>, "meta": {"endpoint", "node"}}; unless skip_original_data,
first {"payload": <the webhook>, "meta": {"endpoint"}}. Two differences, on purpose: request headers
are not passed on (they may carry the webhook's credentials), and the alert's node is meta.node, not
meta.hosts, which run_playbook would turn into a --limit: the playbook's guard must see every alert,
about a node of the inventory or not, to decide and log it.

A request that is not a webhook gets a 4xx and gives no event, never a 500: a token that is not the one
(compared as bytes, in constant time) 401, a charset other than UTF-8 415, a body over 4 MiB 413, and a
body that is not UTF-8 JSON of the webhook's shape (alerts a list of objects, labels and annotations
maps of strings, a status a string), or nested deeper than 8 levels, 400. What is passed on is JSON data.

Arguments:
  host                 address to listen on (default 127.0.0.1: Alertmanager on the same machine); any
                       other address needs a token: whoever reaches an open source starts remediations
  port                 port (default 5000)
  token                when set, a request must carry "Authorization: Bearer <token>" (Alertmanager's
                       webhook http_config.authorization), else it is refused with 401
  data_host_path       where an alert names its node (default labels.instance; a :port is dropped)
  skip_original_data   do not pass the whole webhook first (default false)
  one_per_node         one event per node and webhook, its first alert's (firing first, then the
                       oldest), with the other alerts' labels in meta.also (default false: one per alert)

  sources:
    - gpudirect.gcp.alertmanager:
        host: 127.0.0.1
        port: 5000
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import asyncio
import hmac
import json
import ipaddress
import logging
import math

from aiohttp import http_exceptions, web

MAX_BODY = 4 * 1024 * 1024
# a webhook is 4 levels deep (webhook, alerts, alert, labels): anything much deeper is not one
MAX_DEPTH = 8
# the other alerts of a node an event names (one_per_node), beyond which they are only counted by Alertmanager
MAX_ALSO = 20
# the charsets a JSON body may name (RFC 8259: JSON between systems is UTF-8)
CHARSETS = ("utf-8", "utf8", "us-ascii", "ascii")
# fields that are strings, and maps of strings to strings, where Alertmanager sends them
WEBHOOK_STRINGS = ("version", "groupKey", "status", "receiver", "externalURL")
WEBHOOK_MAPS = ("groupLabels", "commonLabels", "commonAnnotations")
ALERT_STRINGS = ("status", "startsAt", "endsAt", "generatorURL", "fingerprint")
ALERT_MAPS = ("labels", "annotations")


def _at(data, path):
    for key in path.split("."):
        if not isinstance(data, dict) or key not in data:
            return None
        data = data[key]
    return data


def _text(value):
    """A str that UTF-8 can carry (json.loads lets lone surrogates through)."""
    if not isinstance(value, str):
        return False
    try:
        value.encode("utf-8")
    except UnicodeError:
        return False
    return True


def check_data(value, max_depth=MAX_DEPTH):
    """ValueError unless value is JSON data (dicts with string keys, lists, strings, finite numbers,
    booleans, null) at most max_depth containers deep. A loop, not recursion: depth is what is checked."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            if depth > max_depth:
                raise ValueError("nested deeper than %d levels" % max_depth)
            if isinstance(item, dict):
                for key in item:
                    if not _text(key):
                        raise ValueError("a key is not text")
                stack.extend((child, depth + 1) for child in item.values())
            else:
                stack.extend((child, depth + 1) for child in item)
        elif isinstance(item, float):
            if not math.isfinite(item):
                raise ValueError("a number is not finite")
        elif item is not None and not isinstance(item, (bool, int)) and not _text(item):
            raise ValueError("a value is not JSON text, number, boolean or null")


def _shape(data, strings, maps, what):
    for key in strings:
        if key in data and not isinstance(data[key], str):
            raise ValueError("%s %s is not a string" % (what, key))
    for key in maps:
        if key in data and not (isinstance(data[key], dict)
                                and all(isinstance(v, str) for v in data[key].values())):
            raise ValueError("%s %s is not a map of strings" % (what, key))


def _first(alerts):
    """The alert that speaks for its node: a firing one before a resolved one, then the oldest, then by
    fingerprint (Alertmanager's order within a group is not promised)."""
    return sorted(alerts, key=lambda a: (a.get("status") != "firing", str(a.get("startsAt", "")),
                                         str(a.get("fingerprint", ""))))[0]


def events(payload, endpoint, host_path="labels.instance", skip_original_data=False, one_per_node=False):
    """The events one webhook gives; ValueError when it is not Alertmanager's shape or not JSON data.
    With one_per_node, a node's alerts give one event, its first alert's, with the others' labels in
    meta.also (at most MAX_ALSO): one remediation per node, whatever the number of its findings."""
    if not isinstance(payload, dict) or not isinstance(payload.get("alerts"), list):
        raise ValueError("the body is not an Alertmanager webhook (no alerts list)")
    check_data(payload)
    _shape(payload, WEBHOOK_STRINGS, WEBHOOK_MAPS, "the webhook's")
    for alert in payload["alerts"]:
        if not isinstance(alert, dict):
            raise ValueError("an alert is not an object")
        _shape(alert, ALERT_STRINGS, ALERT_MAPS, "an alert's")
    out = [] if skip_original_data else [{"payload": payload, "meta": {"endpoint": endpoint}}]
    by_node, order = {}, []
    for index, alert in enumerate(payload["alerts"]):
        host = _at(alert, host_path)
        node = (host.rsplit(":", 1)[0] if host.count(":") == 1 else host) if isinstance(host, str) and host else None
        # an alert naming no node is never folded into another's
        key = node if one_per_node and node is not None else (None, index)
        if key not in by_node:
            by_node[key] = []
            order.append((key, node))
        by_node[key].append(alert)
    for key, node in order:
        alerts = by_node[key]
        first = _first(alerts) if len(alerts) > 1 else alerts[0]
        meta = {"endpoint": endpoint, "node": node}
        if one_per_node and node is not None:
            meta["also"] = [dict(a.get("labels") or {}, status=a.get("status"))
                            for a in alerts if a is not first][:MAX_ALSO]
        out.append({"alert": first, "meta": meta})
    return out


def _raw_headers(request, name):
    """The raw bytes of each header called name: header values need not be text."""
    return [value for key, value in request.raw_headers if key.lower() == name]


def _charset_problem(values):
    """Why the Content-Type headers (raw bytes) rule out a UTF-8 body, or None. The media type is not
    checked: Alertmanager sends application/json, curl and urllib a form type."""
    if len(values) > 1:
        return "more than one Content-Type"
    if not values:
        return None
    try:
        text = values[0].decode("ascii")
    except UnicodeError:
        return "the Content-Type is not ASCII"
    for param in text.split(";")[1:]:
        name, _sep, value = param.partition("=")
        if name.strip().lower() == "charset" and value.strip().strip('"').lower() not in CHARSETS:
            return "the body must be UTF-8"
    return None


def parse_body(body):
    """The webhook in a request body (bytes); ValueError says why it is not one."""
    try:
        text = body.decode("utf-8")
    except UnicodeError:
        raise ValueError("the body is not UTF-8")

    def no_constant(name):
        raise ValueError("%s is not JSON" % name)

    try:
        return json.loads(text, parse_constant=no_constant)
    except RecursionError:
        raise ValueError("nested deeper than %d levels" % MAX_DEPTH)


def _refuse(status, why):
    return web.Response(status=status, text="%s\n" % why)


def application(queue, args):
    expected = ("Bearer " + (args.get("token") or "")).encode("utf-8")
    token = bool(args.get("token"))
    host_path = str(args.get("data_host_path", "labels.instance"))
    skip = bool(args.get("skip_original_data", False))
    one_per_node = bool(args.get("one_per_node", False))

    async def webhook(request):
        if token:
            given = _raw_headers(request, b"authorization")
            # bytes against bytes, in constant time; a second header is not a way around the first
            if not (hmac.compare_digest(given[0] if given else b"", expected) and len(given) == 1):
                return _refuse(401, "unauthorized")
        endpoint = request.match_info.get("endpoint", "")
        if len(endpoint) > 200 or not endpoint.isprintable():
            return _refuse(400, "bad request: the path is not printable text")
        problem = _charset_problem(_raw_headers(request, b"content-type"))
        if problem:
            return _refuse(415, "unsupported media type: %s" % problem)
        if request.content_length is not None and request.content_length > MAX_BODY:
            return _refuse(413, "the body is over %d bytes" % MAX_BODY)
        try:
            body = await request.read()
        except web.HTTPRequestEntityTooLarge:
            return _refuse(413, "the body is over %d bytes" % MAX_BODY)
        except (http_exceptions.HttpProcessingError, ConnectionError, asyncio.IncompleteReadError):
            return _refuse(400, "bad request: the body did not arrive whole")
        try:
            payload = parse_body(body)
            found = events(payload, endpoint, host_path, skip, one_per_node)
        except ValueError as exc:
            return _refuse(400, "bad request: %s" % exc)
        for event in found:
            await queue.put(event)
        return web.Response(status=202, text="received %d alert(s) as %d event(s)"
                            % (len(payload["alerts"]), len(found) - (0 if skip else 1)))

    app = web.Application(client_max_size=MAX_BODY)
    app.router.add_post("/", webhook)
    app.router.add_post("/{endpoint:.*}", webhook)
    return app


class ServerLog(logging.LoggerAdapter):
    """aiohttp's server log, where a request the client got wrong (an HTTP error aiohttp answers with a
    4xx, a connection the client dropped) is one warning line, not a traceback; anything else stays an
    error with its traceback."""

    def exception(self, msg, *args, **kwargs):
        exc = kwargs.get("exc_info")
        if isinstance(exc, (ConnectionError, asyncio.IncompleteReadError)) or (
                isinstance(exc, http_exceptions.HttpProcessingError) and 400 <= (exc.code or 0) < 500):
            self.logger.warning(msg + ": %s", *(args + (" ".join(str(exc).split())[:300] or type(exc).__name__,)))
            return
        kwargs.setdefault("exc_info", True)
        self.logger.error(msg, *args, **kwargs)


def startup_problem(args):
    """Why the source must not start with these arguments, in one line, or None: a port that is not
    one, or an address beyond this machine with no token."""
    try:
        port = int(args.get("port", 5000))
    except (TypeError, ValueError):
        port = -1
    if not 0 < port < 65536:
        return "gpudirect.gcp.alertmanager: port must be a number from 1 to 65535, not %r" % (args.get("port"),)
    host = str(args.get("host", "127.0.0.1"))
    if args.get("token"):
        return None
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = host == "localhost"
    if not loopback:
        return ("gpudirect.gcp.alertmanager: host %s is reachable from other machines and no token is set: "
                "set token (and Alertmanager's webhook authorization) or listen on 127.0.0.1" % host)
    return None


async def main(queue, args):
    problem = startup_problem(args)
    if problem:
        raise ValueError(problem)
    runner = web.AppRunner(application(queue, args), logger=ServerLog(logging.getLogger("aiohttp.server"), {}))
    await runner.setup()
    site = web.TCPSite(runner, args.get("host", "127.0.0.1"), int(args.get("port", 5000)))
    await site.start()
    try:
        await asyncio.Future()
    finally:
        await runner.cleanup()


if __name__ == "__main__":
    # a manual try: print the events of the webhooks sent to 127.0.0.1:5000
    class _Printer(object):
        async def put(self, event):
            print(json.dumps(event))

    asyncio.run(main(_Printer(), {}))
