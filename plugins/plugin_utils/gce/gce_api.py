# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A small Compute Engine API client: credentials, one reused session,
retries with backoff, paginated aggregated and per-zone instance listing.

Every failure the caller should show is a ``GceApiError`` whose message is a
single line naming the project, option or file at fault.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import random
import re
import socket
import threading
import time

try:
    from urllib.parse import quote, urlsplit
except ImportError:  # pragma: no cover - Python 2
    from urllib import quote
    from urlparse import urlsplit

# requests and google-auth are imported on first use: a cache hit needs neither,
# and importing them costs about half a second.
_LIBS = {}


def _libs():
    if not _LIBS:
        import requests
        import requests.adapters
        import google.auth
        import google.auth.exceptions
        from google.auth import impersonated_credentials
        from google.auth.transport.requests import AuthorizedSession
        from google.oauth2 import credentials as oauth2_credentials
        from google.oauth2 import service_account
        _LIBS.update(requests=requests, auth=google.auth, exceptions=google.auth.exceptions,
                     impersonated=impersonated_credentials, AuthorizedSession=AuthorizedSession,
                     oauth2=oauth2_credentials, service_account=service_account)
    return _LIBS


DEFAULT_ENDPOINT = "https://compute.googleapis.com"
DEFAULT_IAM_ENDPOINT = "https://iamcredentials.googleapis.com"
DEFAULT_SCOPES = ["https://www.googleapis.com/auth/compute.readonly"]
AUTH_KINDS = ("application", "serviceaccount", "accesstoken")
RETRY_STATUSES = (429, 500, 502, 503, 504)
# Google APIs compress a response only when the client accepts gzip and its user
# agent contains "gzip"; JSON instance listings shrink 10-30x on the wire.
USER_AGENT = "gpudirect.gcp-gce_gpu (gzip)"
PAGE_SIZE = 500
# Backoff: the first retry waits up to BACKOFF_BASE s, doubling up to BACKOFF_MAX.
BACKOFF_BASE = 0.5
BACKOFF_MAX = 16.0
# A refused connection is a wrong endpoint or a server that is down, rarely a blip:
# a few quick tries, not the whole retry budget.
REFUSED_ATTEMPTS = 3
# How long one listing of one project may take in all, pages and retries included
PROJECT_TIMEOUT = 300
# Seconds to wait for a TCP connection to the API or token endpoint. Google's front ends answer in
# milliseconds; a connection that takes longer is dropped by a firewall or proxy, and waiting out the
# whole retry budget only hides that. Not retried: the error names the host at once. 2 s leaves room
# for one lost SYN (Linux sends the second at 1 s; a 3 s limit would allow no more).
CONNECT_TIMEOUT = 2

# Only the instance fields the inventory reads (gce_hosts.host_vars, the zone fallback to
# selfLink, the hostnames entries): a large project's pages shrink by an order of magnitude
# compared with full instance resources. A unit test checks that every field here is read.
INSTANCE_FIELDS = (
    "name,id,zone,selfLink,machineType,status,labels,"
    "networkInterfaces(name,network,subnetwork,networkIP,ipv6Address,stackType,nicType,macAddress,"
    "accessConfigs(natIP)),"
    "resourcePolicies,scheduling(provisioningModel),"
    "reservationAffinity(consumeReservationType,values),"
    "resourceStatus(physicalHost,physicalHostTopology),"
    "guestAccelerators(acceleratorType,acceleratorCount)"
)


def aggregated_fields(instance_fields):
    """The fields parameter of an aggregated instance listing that keeps instance_fields of each instance."""
    return ("items/*/instances(%s),items/*/warning(code,message),nextPageToken,unreachables,warning(code,message)"
            % instance_fields)


def zone_fields(instance_fields):
    """The fields parameter of a per-zone instance listing that keeps instance_fields of each instance."""
    return "items(%s),nextPageToken" % instance_fields


# The options an action plugin takes to reach the Compute API, and the inventory
# plugin's environment variables they default to, so one set of credentials
# serves the inventory and every controller-side call.
AUTH_ARGUMENT_SPEC = dict(
    auth_kind=dict(type="str", choices=list(AUTH_KINDS)),
    service_account_file=dict(type="path"),
    service_account_contents=dict(type="raw", no_log=True),
    access_token=dict(type="str", no_log=True),
    impersonate_service_account=dict(type="str"),
    api_endpoint=dict(type="str"),
    timeout=dict(type="int", default=30),
)
AUTH_ENV = dict(auth_kind="GCP_AUTH_KIND", service_account_file="GCP_SERVICE_ACCOUNT_FILE",
                service_account_contents="GCP_SERVICE_ACCOUNT_CONTENTS", access_token="GCP_ACCESS_TOKEN",
                impersonate_service_account="GCP_IMPERSONATE_SERVICE_ACCOUNT", api_endpoint="GCP_COMPUTE_API_ENDPOINT")


def auth_from_env(args, environ):
    """Fill the unset auth options from the environment; returns the API endpoint (no trailing /)."""
    for key, var in AUTH_ENV.items():
        if args.get(key) is None and environ.get(var):
            args[key] = environ[var]
    # an AWX job (not an inventory update) gets only the key file of its Google Compute Engine credential
    if not args.get("auth_kind") and not args.get("service_account_file") and environ.get("GCE_CREDENTIALS_FILE_PATH"):
        args["auth_kind"] = "serviceaccount"
        args["service_account_file"] = environ["GCE_CREDENTIALS_FILE_PATH"]
    args["auth_kind"] = args.get("auth_kind") or "application"
    return (args.get("api_endpoint") or DEFAULT_ENDPOINT).rstrip("/")


# The ways credentials can be given, for the error that says none were found
CREDENTIAL_WAYS = ("run `gcloud auth application-default login` (Application Default Credentials), "
                   "set GOOGLE_APPLICATION_CREDENTIALS to a service account key file, or set the inventory's "
                   "auth_kind option (serviceaccount with service_account_file, accesstoken with access_token)")


def client_for(args, endpoint, scopes=None, retries=3):
    """A ComputeClient from the auth options (GceApiError when credentials cannot be built)."""
    creds = build_credentials(
        auth_kind=args["auth_kind"], service_account_file=args.get("service_account_file"),
        service_account_contents=args.get("service_account_contents"), access_token=args.get("access_token"),
        impersonate_service_account=args.get("impersonate_service_account"), scopes=scopes)
    return ComputeClient(creds, endpoint=endpoint, timeout=args.get("timeout") or 30, retries=retries)


class GceApiError(Exception):
    """One-line, user-facing error from talking to the Compute API."""

    def __init__(self, message, status=None, project=None, reason=None):
        super(GceApiError, self).__init__(message)
        self.status = status
        self.project = project
        self.reason = reason


# GCE's naming rules: instances, zones and networks are RFC 1035 labels; project ids are 6 to 30
# characters (a domain-scoped id has its domain and a colon in front)
_NAME_RULE = re.compile(r"^[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?$")
_PROJECT_RULE = re.compile(r"^(?:[a-z0-9][-a-z0-9.]*[a-z0-9]:)?[a-z][-a-z0-9]{4,28}[a-z0-9]$")


def valid_name(kind, value):
    """The name, when it follows GCE's rule for its kind (project, zone, instance); else GceApiError
    in one line naming it. A name that reaches a URL must never change which resource it names."""
    rule = _PROJECT_RULE if kind == "project" else _NAME_RULE
    if not isinstance(value, str) or not rule.match(value):
        raise GceApiError("%s %r is not a valid GCE %s name" % (kind, value, kind))
    return value


def segment(value):
    """A name as one URL path segment: '/', '..', '?', '#' and the rest percent-encoded."""
    return quote(str(value), safe=":")


def instance_path(project, zone, instance, verb=None):
    """projects/P/zones/Z/instances/I[/verb], each name checked against GCE's rules and escaped."""
    path = "projects/%s/zones/%s/instances/%s" % (
        segment(valid_name("project", project)), segment(valid_name("zone", zone)),
        segment(valid_name("instance", instance)))
    return path + ("/" + verb if verb else "")


def check_dependencies():
    """Return a one-line message naming the missing Python package, or None."""
    missing = []
    for package, module in (("requests", "requests"), ("google-auth", "google.auth")):
        try:
            __import__(module)
        except ImportError:
            missing.append(package)
    if missing:
        return ("the gpudirect.gcp.gce_gpu inventory needs the Python package(s) %s on the controller "
                "(pip install %s)" % (", ".join(missing), " ".join(missing)))
    _libs()
    return None


_LOOPBACK = re.compile(r"^http://(localhost|127(?:\.\d{1,3}){3}|\[::1\])(?::\d+)?(?:/|$)")


def auth_warnings(auth_kind, endpoint, service_account_file=None, stat=os.stat):
    """What about the credentials deserves a word before they are used: a key file others can read, a
    plain-HTTP endpoint that will receive the bearer token (loopback test servers excepted)."""
    out = []
    if auth_kind == "serviceaccount" and service_account_file:
        try:
            mode = stat(service_account_file).st_mode & 0o777
        except (IOError, OSError):
            mode = None  # reading it names the problem
        if mode is not None and mode & 0o077:
            out.append("service_account_file %s can be read by others (mode %04o): it holds a private key; "
                       "chmod 600 it" % (service_account_file, mode))
    if (endpoint or "").lower().startswith("http://") and not _LOOPBACK.match(endpoint.lower()):
        out.append("api_endpoint %s is plain HTTP: the bearer token crosses the network unencrypted; use https"
                   % endpoint)
    return out


def _load_service_account_info(service_account_file, service_account_contents):
    if service_account_contents:
        if isinstance(service_account_contents, dict):
            return service_account_contents, "service_account_contents"
        try:
            return json.loads(service_account_contents), "service_account_contents"
        except ValueError as exc:
            raise GceApiError("option service_account_contents is not valid JSON: %s" % exc)
    if not service_account_file:
        raise GceApiError("auth_kind serviceaccount needs service_account_file or service_account_contents "
                          "(or GCP_SERVICE_ACCOUNT_FILE / GOOGLE_APPLICATION_CREDENTIALS)")
    try:
        with open(service_account_file, "r") as handle:
            text = handle.read()
    except (IOError, OSError) as exc:
        raise GceApiError("service_account_file %s cannot be read: %s" % (service_account_file, exc.strerror or exc))
    try:
        return json.loads(text), "service_account_file %s" % service_account_file
    except ValueError as exc:
        raise GceApiError("service_account_file %s is not valid JSON: %s" % (service_account_file, exc))


def build_credentials(auth_kind="application", service_account_file=None, service_account_contents=None,
                      access_token=None, impersonate_service_account=None, scopes=None,
                      iam_endpoint=None):
    """Build google-auth credentials from the plugin options."""
    libs = _libs()
    scopes = list(scopes or DEFAULT_SCOPES)
    if auth_kind not in AUTH_KINDS:
        raise GceApiError("option auth_kind has unknown value %r; expected one of: %s"
                          % (auth_kind, ", ".join(AUTH_KINDS)))
    if auth_kind == "accesstoken":
        if not access_token:
            raise GceApiError("auth_kind accesstoken needs option access_token (or GCP_ACCESS_TOKEN)")
        creds = libs["oauth2"].Credentials(token=access_token)
    elif auth_kind == "serviceaccount":
        info, origin = _load_service_account_info(service_account_file, service_account_contents)
        if not isinstance(info, dict) or info.get("type") != "service_account":
            raise GceApiError("%s is not a service account key (expected \"type\": \"service_account\")" % origin)
        try:
            creds = libs["service_account"].Credentials.from_service_account_info(info, scopes=scopes)
        except (ValueError, KeyError, TypeError) as exc:
            raise GceApiError("%s is not a usable service account key: %s"
                              % (origin, str(exc).splitlines()[0] if str(exc) else type(exc).__name__))
    else:
        try:
            creds = libs["auth"].default(scopes=scopes)[0]
        except libs["exceptions"].DefaultCredentialsError as exc:
            text = " ".join(str(exc).split())
            if "were not found" in text:
                raise GceApiError("no Google Cloud credentials found (auth_kind application): " + CREDENTIAL_WAYS)
            raise GceApiError("auth_kind application found no usable Application Default Credentials: %s" % text)
    if impersonate_service_account:
        override = None
        if iam_endpoint and iam_endpoint.rstrip("/") != DEFAULT_IAM_ENDPOINT:
            override = "%s/v1/projects/-/serviceAccounts/%s:generateAccessToken" % (
                iam_endpoint.rstrip("/"), impersonate_service_account)
        creds = libs["impersonated"].Credentials(
            source_credentials=creds, target_principal=impersonate_service_account,
            target_scopes=scopes, iam_endpoint_override=override)
    return creds


def _error_detail(response):
    """(reason, message) from a Google JSON error body, best effort."""
    try:
        body = response.json()
    except ValueError:
        return None, (response.text or "").strip().splitlines()[0][:200] if response.text else ""
    err = body.get("error") if isinstance(body, dict) else None
    if isinstance(err, dict):
        reason = None
        errors = err.get("errors") or []
        if errors and isinstance(errors[0], dict):
            reason = errors[0].get("reason")
        for detail in err.get("details") or []:
            if isinstance(detail, dict) and detail.get("reason"):
                reason = reason or detail.get("reason")
        return reason, " ".join(str(err.get("message", "")).split())
    if isinstance(err, str):  # OAuth style {"error": "invalid_grant", ...}
        return err, " ".join(str(body.get("error_description", err)).split())
    return None, ""


def _retry_after(response):
    value = response.headers.get("Retry-After") if response is not None else None
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


class ComputeClient(object):
    """Thread-safe reader of the Compute API over one AuthorizedSession."""

    def __init__(self, credentials, endpoint=DEFAULT_ENDPOINT, timeout=30, retries=8,
                 retry_max_time=60.0, backoff_base=None, backoff_max=None, pool_size=16,
                 sleep=time.sleep, project_timeout=PROJECT_TIMEOUT, log=None, connect_timeout=CONNECT_TIMEOUT):
        self.endpoint = (endpoint or DEFAULT_ENDPOINT).rstrip("/")
        self.connect_timeout = connect_timeout
        self.project_timeout = project_timeout
        self._log = log or (lambda text: None)
        self._refused_named = set()
        self.timeout = timeout
        self.retries = retries
        self.retry_max_time = retry_max_time
        self.backoff_base = BACKOFF_BASE if backoff_base is None else backoff_base
        self.backoff_max = BACKOFF_MAX if backoff_max is None else backoff_max
        self._sleep = sleep
        self._libs = libs = _libs()
        # No silent refresh-and-retry on 401: a rejected token is reported as such.
        self._auth_request = _timed_request((connect_timeout, timeout))
        self.session = libs["AuthorizedSession"](credentials, refresh_status_codes=(), auth_request=self._auth_request)
        self.session.headers.update({"User-Agent": USER_AGENT, "Accept-Encoding": "gzip"})
        # One pool sized for the thread pool so parallel calls reuse connections.
        adapter = libs["requests"].adapters.HTTPAdapter(pool_connections=pool_size, pool_maxsize=pool_size)
        self.session.mount("https://", adapter)
        self.session.mount("http://", adapter)
        self.request_count = 0
        self.retry_count = 0
        self._lock = threading.Lock()

    def authenticate(self):
        """Fetch the token once, before parallel calls would race to fetch one each."""
        creds = self.session.credentials
        if creds.valid:
            return
        try:
            creds.refresh(self._auth_request)
        except self._libs["exceptions"].RefreshError as exc:
            raise GceApiError("could not obtain an access token: %s" % _refresh_error_text(exc))
        except self._libs["exceptions"].TransportError as exc:
            gone = unreachable(exc, None, self.connect_timeout)
            raise GceApiError("could not reach the token endpoint: %s" % (
                gone or " ".join(str(exc).split())[:300]))

    def close(self):
        self.session.close()

    def url(self, path):
        return "%s/compute/v1/%s" % (self.endpoint, path.lstrip("/"))

    def _count(self, retried=False):
        with self._lock:
            self.request_count += 1
            if retried:
                self.retry_count += 1

    def _read(self, url, params, deadline):
        """One GET. A read timeout bounds each wait for bytes, not the answer: a server that trickles
        bytes would never be given up on, so at the deadline a timer shuts the connection.

        Returns (status, response, body bytes or None for an error status)."""
        timeout = self.timeout
        if deadline is not None:
            timeout = max(0.1, min(timeout, deadline - time.monotonic()))
        response = self.session.get(url, params=params, timeout=(min(self.connect_timeout, timeout), timeout),
                                    stream=True)
        fired = []
        timer = None
        if deadline is not None:
            timer = threading.Timer(max(0.0, deadline - time.monotonic()), _shut, (response, fired))
            timer.daemon = True
            timer.start()
        try:
            body = response.content
        except Exception:
            if fired:
                raise DeadlineError()
            raise
        finally:
            if timer is not None:
                timer.cancel()
            response.close()
        if fired:
            raise DeadlineError()
        return response.status_code, response, body if response.status_code == 200 else None

    def get(self, path, params=None, project=None, what="request", deadline=None, permission=None):
        """GET a Compute API path and return its JSON, retrying transient failures.

        deadline: a time.monotonic() after which no answer is waited for (project_timeout)."""
        url = self.url(path)
        budget = time.monotonic() + self.retry_max_time
        attempt = 0
        refused = 0
        where = ("project %s: " % project) if project else ""
        auth_errors = self._libs["exceptions"]
        requests = self._libs["requests"]
        transient = (requests.ConnectionError, requests.Timeout, requests.exceptions.ChunkedEncodingError,
                     requests.exceptions.ContentDecodingError)
        while True:
            response = None
            problem = None
            body = None
            try:
                self._count(retried=attempt > 0)
                status, response, body = self._read(url, params, deadline)
            except DeadlineError:
                raise self._late(where, what, project)
            except auth_errors.RefreshError as exc:
                raise GceApiError("%scould not obtain an access token: %s"
                                  % (where, _refresh_error_text(exc)), project=project)
            except auth_errors.TransportError as exc:
                raise GceApiError("%scould not reach the token endpoint: %s"
                                  % (where, " ".join(str(exc).split())[:300]), project=project)
            except transient as exc:
                gone = unreachable(exc, url, self.connect_timeout, requests.exceptions.ConnectTimeout)
                if gone:
                    raise GceApiError("%s (option api_endpoint %s)" % (gone, self.endpoint), project=project)
                if deadline is not None and time.monotonic() > deadline:
                    raise self._late(where, what, project)
                if _is_refused(exc):
                    refused += 1
                    problem = "connection refused by %s" % self.endpoint
                    if self.endpoint not in self._refused_named:
                        self._refused_named.add(self.endpoint)
                        self._log("gce_gpu: %s refused the connection (%s)" % (self.endpoint, url))
                else:
                    problem = "connection error (%s)" % type(exc).__name__
            if response is not None and problem is None:
                if status == 200:
                    try:
                        return json.loads(body.decode("utf-8"))
                    except ValueError:
                        raise GceApiError("%s%s returned a body that is not JSON" % (where, what), project=project)
                if status not in RETRY_STATUSES:
                    raise self._fatal(response, project, what, permission)
                problem = "HTTP %d" % status
            attempt += 1
            delay = min(self.backoff_max, self.backoff_base * (2 ** (attempt - 1)))
            delay = random.uniform(delay / 2.0, delay)  # jitter
            wait = _retry_after(response)
            if wait is not None:
                delay = max(delay, wait)
            remaining = min(budget, deadline if deadline is not None else budget) - time.monotonic()
            if attempt > self.retries or delay > remaining or refused >= REFUSED_ATTEMPTS:
                raise GceApiError("%s%s kept failing with %s after %d attempts (retry budget %.0f s)"
                                  % (where, what, problem, attempt, self.retry_max_time),
                                  status=response.status_code if response is not None else None,
                                  project=project)
            self._sleep(delay)

    def post(self, path, body, project=None, what="request", permission=None):
        """POST JSON to a Compute API path and return its JSON (an Operation for a method call).

        Only a refusal before any work (429, 503) or a refused connection is retried: a request that
        may have been acted on is not sent twice. permission names what a 403 lacks."""
        return self._post(self.url(path), what, permission, idempotent=False, project=project,
                          option="api_endpoint %s" % self.endpoint, json=body)

    def upload(self, url, params, data, content_type, what="upload", permission=None):
        """POST bytes to a full URL (a Cloud Storage media upload) and return its JSON.

        Writing an object under a name is idempotent, so unlike post() every transient answer (429,
        5xx), a timeout and a refused connection are retried, with jitter as a listing's retries; anything
        else is one GceApiError naming what and why."""
        return self._post(url, what, permission, idempotent=True, api="Cloud Storage JSON",
                          option="storage_endpoint", params=params, data=data,
                          headers={"Content-Type": content_type})

    def _post(self, url, what, permission, idempotent, project=None, api="Compute Engine", option=None, **send):
        """One POST with post()'s and upload()'s retry rules; send: the body and its headers."""
        where = ("project %s: " % project) if project else ""
        # a request that may have been acted on says so when it fails
        maybe = "" if idempotent else "; it may or may not have been acted on"
        requests = self._libs["requests"]
        auth_errors = self._libs["exceptions"]
        attempt = 0
        while True:
            attempt += 1
            self._count(retried=attempt > 1)
            try:
                response = self.session.post(url, timeout=(min(self.connect_timeout, self.timeout), self.timeout),
                                             **send)
            except (auth_errors.RefreshError, auth_errors.TransportError) as exc:
                raise GceApiError("%s%scould not obtain an access token: %s"
                                  % (where, what + ": " if idempotent else "", " ".join(str(exc).split())[:300]),
                                  project=project)
            except requests.ConnectionError as exc:
                gone = unreachable(exc, url, self.connect_timeout, requests.exceptions.ConnectTimeout)
                if gone:
                    raise GceApiError("%s%s was not sent: %s (option %s)" % (where, what, gone, option),
                                      project=project)
                if not _is_refused(exc) or attempt > min(self.retries, REFUSED_ATTEMPTS):
                    raise GceApiError("%s%s: connection error (%s)%s" % (where, what, type(exc).__name__, maybe),
                                      project=project)
                self._sleep(self.backoff_base)
                continue
            except requests.Timeout:
                if not idempotent or attempt > self.retries:
                    raise GceApiError("%s%s: no answer within %s s%s" % (where, what, _seconds(self.timeout), maybe),
                                      project=project)
                continue
            if response.status_code == 200:
                try:
                    return response.json()
                except ValueError:
                    raise GceApiError("%s%s returned a body that is not JSON" % (where, what), project=project)
            if response.status_code in (RETRY_STATUSES if idempotent else (429, 503)) and attempt <= self.retries:
                wait = _retry_after(response)
                delay = min(self.backoff_max, self.backoff_base * (2 ** (attempt - 1)))
                if idempotent:
                    delay *= random.uniform(0.5, 1.0)
                self._sleep(max(delay, wait or 0.0))
                continue
            raise self._fatal(response, project, what, permission, api=api)

    def _late(self, where, what, project):
        return GceApiError("%s%s got no complete answer within the deadline of %s s (option project_timeout)"
                           % (where, what, _seconds(self.project_timeout)), project=project)

    def _fatal(self, response, project, what, permission="compute.instances.list", api="Compute Engine"):
        status = response.status_code
        reason, message = _error_detail(response)
        subject = ("project %s" % project) if project else what
        if status == 401:
            cause = "authentication failed (401): the credentials were rejected"
        elif status == 403 and reason in ("accessNotConfigured", "SERVICE_DISABLED"):
            cause = "the %s API is disabled (403)" % api
        elif status == 403:
            cause = "permission denied (403): the credentials lack %s" % (permission or "compute.instances.list")
        elif status == 404:
            cause = "not found (404): unknown project or resource"
        else:
            cause = "HTTP %d" % status
        if message:
            cause = "%s: %s" % (cause, message[:300])
        return GceApiError("%s: %s" % (subject, cause), status=status, project=project, reason=reason)

    def list_pages(self, path, params, project, items_kind=list, what="listing instances", permission=None):
        """Yield each page of a paginated list call, within the project deadline.

        items_kind: what a page's ``items`` must be (a list, or a dict for aggregated lists)."""
        params = dict(params)
        deadline = time.monotonic() + self.project_timeout if self.project_timeout else None
        seen = set()
        while True:
            page = self.get(path, params=params, project=project, what=what, deadline=deadline,
                            permission=permission)
            problem = _malformed(page, items_kind)
            if problem:
                raise GceApiError("project %s: %s returned a malformed answer: %s" % (project, what, problem),
                                  project=project)
            yield page
            token = page.get("nextPageToken")
            if not token:
                return
            if token in seen:
                raise GceApiError("project %s: %s repeated the page token %r; stopped rather than loop"
                                  % (project, what, token[:40]), project=project)
            seen.add(token)
            params["pageToken"] = token

    def aggregated_instances(self, project, api_filter=None, fields=INSTANCE_FIELDS):
        """All instances of a project: (instances, unreachable scopes, warnings)."""
        params = {"maxResults": PAGE_SIZE, "returnPartialSuccess": "true"}
        if api_filter:
            params["filter"] = api_filter
        if fields:
            params["fields"] = aggregated_fields(fields)
        instances, unreachable, warnings = [], [], []
        for page in self.list_pages("projects/%s/aggregated/instances" % segment(project), params, project,
                                    items_kind=dict):
            for scope, entry in sorted((page.get("items") or {}).items()):
                instances.extend(_zoned(entry.get("instances") or [], scope))
                warning = entry.get("warning") or {}
                if warning.get("code") == "UNREACHABLE":
                    unreachable.append(scope)
            unreachable.extend(page.get("unreachables") or [])
            top = page.get("warning") or {}
            if top.get("code") and top.get("code") not in ("NO_RESULTS_ON_PAGE",):
                warnings.append("%s: %s" % (top.get("code"), top.get("message", "")))
        return instances, sorted(set(unreachable)), warnings

    def zone_instances(self, project, zone, api_filter=None, fields=INSTANCE_FIELDS):
        params = {"maxResults": PAGE_SIZE}
        if api_filter:
            params["filter"] = api_filter
        if fields:
            params["fields"] = zone_fields(fields)
        instances = []
        path = "projects/%s/zones/%s/instances" % (segment(project), segment(zone))
        for page in self.list_pages(path, params, project):
            instances.extend(_zoned(page.get("items") or [], "zones/" + zone))
        return instances

    def networks(self, project):
        """networks.list of a project: {selfLink: mtu or None}."""
        out = {}
        params = {"maxResults": PAGE_SIZE, "fields": "items(selfLink,mtu),nextPageToken"}
        for page in self.list_pages("projects/%s/global/networks" % segment(project), params, project,
                                    what="listing networks"):
            for net in page.get("items") or []:
                if net.get("selfLink"):
                    out[net["selfLink"]] = net.get("mtu")
        return out

    def firewalls(self, project):
        """firewalls.list of a project: the rules as the API gives them."""
        fields = ("items(name,network,direction,priority,disabled,sourceRanges,sourceTags,sourceServiceAccounts,"
                  "targetTags,targetServiceAccounts,allowed,denied),nextPageToken")
        params = {"maxResults": PAGE_SIZE, "fields": fields}
        rules = []
        for page in self.list_pages("projects/%s/global/firewalls" % segment(project), params, project,
                                    what="listing firewall rules", permission="compute.firewalls.list"):
            rules.extend(page.get("items") or [])
        return rules

    def network(self, network_url):
        """networks.get for a network self link (possibly in another project)."""
        path = network_url.split("/compute/v1/", 1)[-1] if "/compute/v1/" in network_url else network_url
        project = path.split("/")[1] if path.startswith("projects/") else None
        return self.get(path, params={"fields": "name,mtu,selfLink"}, project=project,
                        what="reading network %s" % path, permission="compute.networks.get")


class DeadlineError(Exception):
    """The answer did not complete before the deadline."""


def _shut(response, fired):
    """Shut the socket under a response that is still being read (from the deadline timer)."""
    fired.append(True)
    raw = getattr(response, "raw", None)
    conn = getattr(raw, "connection", None) or getattr(raw, "_connection", None)
    sock = getattr(conn, "sock", None)
    if sock is not None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def _zoned(instances, scope):
    """The listed records, each without a zone given the scope (zones/<z>) it is listed under."""
    return [dict(inst, zone=scope) if isinstance(inst, dict) and not inst.get("zone") else inst
            for inst in instances]


def _seconds(value):
    return ("%g" % value) if value is not None else "?"


def _timed_request(timeouts):
    """google-auth's request callable (token and metadata calls) with (connect, read) timeouts: its
    default waits two minutes for a token endpoint that cannot be reached."""
    transport = __import__("google.auth.transport.requests", fromlist=["Request"])

    class TimedRequest(transport.Request):
        def __call__(self, url, method="GET", body=None, headers=None, timeout=None, **kwargs):
            return super(TimedRequest, self).__call__(url, method=method, body=body, headers=headers,
                                                      timeout=timeout or timeouts, **kwargs)

    return TimedRequest()


# What requests, urllib3 and the C library say when a host name does not resolve
_DNS_SIGNS = ("failed to resolve", "nameresolutionerror", "name or service not known",
              "temporary failure in name resolution", "nodename nor servname", "no address associated",
              "getaddrinfo failed")
_ERRNO_TEXT = re.compile(r"\[Errno -?\d+\] ([^)'\"\]]+)")
_HOST_IN_TEXT = re.compile(r"host='([^']+)'(?:, port=(\d+))?")


def unreachable(exc, url, connect_timeout, connect_timeout_class=None):
    """A phrase naming the host when exc is a failure that retrying will not cure within the retry
    budget: a name that does not resolve, or a connection nobody answers within connect_timeout.
    None otherwise (refused connections, resets and cut answers are retried)."""
    text = str(exc)
    lower = text.lower()
    host = port = None
    if url:
        parts = urlsplit(url)
        host = parts.hostname
        port = parts.port or (443 if parts.scheme == "https" else 80)
    else:
        found = _HOST_IN_TEXT.search(text)
        if found:
            host, port = found.group(1), found.group(2)
    host = host or "the API host"
    if any(sign in lower for sign in _DNS_SIGNS):
        why = _ERRNO_TEXT.search(text)
        return "cannot resolve the host name %s (%s): check the name and the controller's DNS" % (
            host, why.group(1).strip() if why else "no such name")
    if (connect_timeout_class is not None and isinstance(exc, connect_timeout_class)) or "connect timeout" in lower:
        return ("no answer connecting to %s%s within %s s (option connect_timeout): a firewall or proxy drops "
                "the connection, or the host is down" % (host, (":%s" % port) if port else "",
                                                         _seconds(connect_timeout)))
    return None


def _is_refused(exc):
    text = str(exc).lower()
    return "refused" in text or "errno 111" in text


def _malformed(page, items_kind):
    """Why a listing page is not what the API sends, or None."""
    if page is None:
        return "the body is null"
    if not isinstance(page, dict):
        return "the body is %s, expected a mapping" % ("a list" if isinstance(page, list) else type(page).__name__)
    items = page.get("items")
    if items is not None and not isinstance(items, items_kind):
        return "items is %s, expected %s" % (
            "a list" if isinstance(items, list) else type(items).__name__,
            "a mapping of scopes" if items_kind is dict else "a list")
    if isinstance(items, dict) and not all(isinstance(v, dict) for v in items.values()):
        return "a scope of items is not a mapping"
    return None


def _refresh_error_text(exc):
    parts = []
    for arg in exc.args:
        text = arg if isinstance(arg, str) else str(arg)
        text = " ".join(text.split())
        if text:
            parts.append(text)
    return ("; ".join(parts) or type(exc).__name__)[:300]
