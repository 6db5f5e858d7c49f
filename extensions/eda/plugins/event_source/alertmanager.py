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

Arguments:
  host                 address to listen on (default 127.0.0.1: Alertmanager on the same machine)
  port                 port (default 5000)
  token                when set, a request must carry "Authorization: Bearer <token>" (Alertmanager's
                       webhook http_config.authorization), else it is refused with 401
  data_host_path       where an alert names its node (default labels.instance; a :port is dropped)
  skip_original_data   do not pass the whole webhook first (default false)

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

from aiohttp import web

MAX_BODY = 4 * 1024 * 1024


def _at(data, path):
    for key in path.split("."):
        if not isinstance(data, dict) or key not in data:
            return None
        data = data[key]
    return data


def events(payload, endpoint, host_path="labels.instance", skip_original_data=False):
    """The events one webhook gives; ValueError when it is not Alertmanager's shape."""
    if not isinstance(payload, dict) or not isinstance(payload.get("alerts"), list):
        raise ValueError("the body is not an Alertmanager webhook (no alerts list)")
    out = [] if skip_original_data else [{"payload": payload, "meta": {"endpoint": endpoint}}]
    for alert in payload["alerts"]:
        if not isinstance(alert, dict):
            continue
        host = _at(alert, host_path)
        node = (host.rsplit(":", 1)[0] if host.count(":") == 1 else host) if isinstance(host, str) and host else None
        out.append({"alert": alert, "meta": {"endpoint": endpoint, "node": node}})
    return out


def application(queue, args):
    token = args.get("token") or ""
    host_path = str(args.get("data_host_path", "labels.instance"))
    skip = bool(args.get("skip_original_data", False))

    async def webhook(request):
        if token:
            given = request.headers.get("Authorization", "")
            if not hmac.compare_digest(given.encode("utf-8"), ("Bearer " + token).encode("utf-8")):
                return web.Response(status=401, text="unauthorized")
        try:
            payload = json.loads(await request.text())
            found = events(payload, request.match_info.get("endpoint", ""), host_path, skip)
        except ValueError as exc:
            return web.Response(status=400, text="bad request: %s" % exc)
        for event in found:
            await queue.put(event)
        return web.Response(status=202, text="received %d alert(s)" % (len(found) - (0 if skip else 1)))

    app = web.Application(client_max_size=MAX_BODY)
    app.router.add_post("/", webhook)
    app.router.add_post("/{endpoint:.*}", webhook)
    return app


async def main(queue, args):
    runner = web.AppRunner(application(queue, args))
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
