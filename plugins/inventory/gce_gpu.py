# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: gce_gpu
short_description: Google Cloud A3/A4 GPU VMs as an inventory, grouped by family, transport, zone and placement
version_added: 1.0.0
description:
  - Lists the Compute Engine instances of one or more projects and keeps the A3 and A4 GPU VMs
    (machine types from the collection's machine-family table), running ones by default.
  - GPU VMs that are no GPUDirect family (G4) are kept too, with C(gpu_family) null, C(gpu_class) their class
    and the groups C(class_<class>) and C(gpu_other), so that the playbooks can say which VMs they leave out.
  - Each host gets C(gpu_family), C(gpu_transport), its NICs by number (C(nic0), the primary NIC, first) with the
    VPC MTU (C(gce_nics)), the NICs that carry GPU traffic for its family (C(gpu_nics)), where it lives and its
    physical topology (C(gce_topology)); O(host_vars=full) adds the labels, machine type, placement, reservation and accelerator facts.
  - C(gce_topology) is C({cluster, block, subblock, host}) from C(resourceStatus.physicalHostTopology) (its keys
    read in any casing, C(subBlock) included), else parsed from C(resourceStatus.physicalHost)
    (C(/block/sub-block/host)); levels the API does not give are left out, and a VM without placement data gets
    C({}). The C(-v) summary line counts the hosts without placement data.
  - Default groups are C(family_<family>), C(transport_<transport>), C(zone_<zone>), C(project_<project>),
    C(placement_<policy>), C(block_<block>) and C(subblock_<block>_<sub-block>), with every character that is not
    a letter, digit or underscore made an underscore.
  - O(compose), O(groups) and O(keyed_groups) see every host variable of O(host_vars=full), whatever O(host_vars) keeps.
  - Uses aggregated lists with C(maxResults=500), C(returnPartialSuccess) and a field mask, queries
    projects (and zones) in parallel over one reused session, and retries throttling and server errors.
  - The configuration file name must end in C(gce_gpu.yml) or C(gce_gpu.yaml); an option it does not know is
    an error that names the closest valid one.
  - The GPU NICs are read from each NIC's own fields, never from its place in the listing - C(nicType) where the
    family's GPU NICs have a type of their own (C(MRDMA) beside gVNIC or IDPF), else the NIC's name C(nicN) -
    and checked against the family table.
  - An instance record the roles cannot use (no machine type, fewer NICs than its family has, a GPU NIC without
    an internal IP or a network, a NIC whose C(nicType) or stack type or whose number of RDMA NICs contradicts
    the family table) is left out with a warning naming it, the NIC and why; a summary counts them.
  - The cache is keyed by the file and every option that changes the answer, credentials included as a hash
    (never stored). A partial answer (a project skipped, zones unreachable) is cached with its warnings, which
    every cached read repeats. The cache holds every host variable; O(host_vars) and O(extra_host_vars) only
    choose what each host keeps of it, so they are not part of the key.
author:
  - gpudirect.gcp contributors (@gpudirect)
extends_documentation_fragment:
  - constructed
  - inventory_cache
requirements:
  - google-auth >= 2.20
  - requests >= 2.28
options:
  auth_kind:
    description:
      - How to obtain credentials.
      - V(application) uses C(google.auth.default()), so Application Default Credentials,
        E(GOOGLE_APPLICATION_CREDENTIALS), workload identity and the metadata server all work.
      - V(serviceaccount) reads a service account key from O(service_account_file) or O(service_account_contents).
      - V(accesstoken) uses O(access_token) as a bearer token.
    type: str
    default: application
    choices: [application, serviceaccount, accesstoken]
    env:
      - name: GCP_AUTH_KIND
  service_account_file:
    description:
      - Path of a service account JSON key, for O(auth_kind=serviceaccount).
      - The variables AWX's Google Compute Engine credential sets are read, so an AWX inventory
        sourced from a project works without extra variables.
    type: path
    env:
      - name: GOOGLE_APPLICATION_CREDENTIALS
      - name: GCE_CREDENTIALS_FILE_PATH
      - name: GCP_SERVICE_ACCOUNT_FILE
  service_account_contents:
    description:
      - The service account JSON key itself (a string or a dict), for O(auth_kind=serviceaccount).
      - Wins over O(service_account_file).
    type: raw
    env:
      - name: GCP_SERVICE_ACCOUNT_CONTENTS
  access_token:
    description:
      - An OAuth2 access token, for O(auth_kind=accesstoken).
    type: str
    env:
      - name: GCP_ACCESS_TOKEN
  impersonate_service_account:
    description:
      - Email of a service account to impersonate with the credentials chosen by O(auth_kind).
      - The caller needs C(roles/iam.serviceAccountTokenCreator) on it.
    type: str
    env:
      - name: GCP_IMPERSONATE_SERVICE_ACCOUNT
  scopes:
    description:
      - OAuth scopes requested for the credentials.
    type: list
    elements: str
    default: ['https://www.googleapis.com/auth/compute.readonly']
    env:
      - name: GCP_SCOPES
  api_endpoint:
    description:
      - Base URL of the Compute Engine API; C(/compute/v1/projects/...) is appended.
      - Change it for Private Service Connect endpoints or a test server.
    type: str
    default: https://compute.googleapis.com
    env:
      - name: GCP_COMPUTE_API_ENDPOINT
  iam_endpoint:
    description:
      - Base URL of the IAM Credentials API, used with O(impersonate_service_account).
    type: str
    default: https://iamcredentials.googleapis.com
    env:
      - name: GCP_IAM_ENDPOINT
  timeout:
    description:
      - Seconds to wait for one HTTP response.
    type: int
    default: 30
    env:
      - name: GCP_GCE_GPU_TIMEOUT
  connect_timeout:
    description:
      - Seconds to wait for a connection to the API or token endpoint. A connection nobody answers
        in time, and a host name that does not resolve, stop the inventory at once with one line
        naming the host; neither is retried.
    type: float
    default: 2
    env:
      - name: GCP_GCE_GPU_CONNECT_TIMEOUT
  retries:
    description:
      - How many times one request is retried on HTTP 429, 500, 502, 503, 504 or a connection error,
        with exponential backoff and jitter; C(Retry-After) is honoured.
    type: int
    default: 8
    env:
      - name: GCP_GCE_GPU_RETRIES
  retry_max_time:
    description:
      - Upper bound, in seconds, on the time one request spends retrying.
      - A refused connection is tried 3 times at most, whatever this allows; the URL is named at C(-v).
    type: float
    default: 60
    env:
      - name: GCP_GCE_GPU_RETRY_MAX_TIME
  project_timeout:
    description:
      - Upper bound, in seconds, on one listing of one project (every page and retry of it), also against a
        server that sends its answer a byte at a time. C(0) waits for ever.
    type: float
    default: 300
    env:
      - name: GCP_GCE_GPU_PROJECT_TIMEOUT
  plugin:
    description: Marks the file as a configuration of this plugin.
    type: str
    required: true
    choices: [gpudirect.gcp.gce_gpu]
  projects:
    description:
      - Project IDs to list. Required (here or in the environment).
    type: list
    elements: str
    env:
      - name: GCP_PROJECT
      - name: GCE_PROJECT
      - name: GCP_GCE_GPU_PROJECTS
  zones:
    description:
      - When set, each zone is listed with its own C(instances.list) call (in parallel) instead of
        one aggregated list per project.
    type: list
    elements: str
    default: []
    env:
      - name: GCP_GCE_GPU_ZONES
  filters:
    description:
      - Compute API filter expressions, ANDed and sent with every list call.
      - When every expression uses the regular-expression form (C(field eq "re"), C(field ne "re")), the
        plugin also sends its own machine type and status expressions so the API returns only GPU VMs;
        otherwise it sends yours alone. Classification happens on the controller in both cases.
    type: list
    elements: str
    default: []
    env:
      - name: GCP_GCE_GPU_FILTERS
  include_filters:
    description:
      - Extra queries whose results are added to those of O(filters). Each entry is a filter
        expression or a list of expressions (ANDed); each entry costs one more list call per project.
    type: list
    elements: raw
    default: []
  exclude_filters:
    description:
      - Queries whose results are removed from the inventory. Each entry is a filter expression or a
        list of expressions (ANDed); each entry costs one more list call per project.
    type: list
    elements: raw
    default: []
  machine_types:
    description:
      - Machine types to keep. The default is every machine type of the family table.
      - Types outside the table are kept with C(gpu_family) and C(gpu_transport) set to null and no C(gpu_nics).
    type: list
    elements: str
    env:
      - name: GCP_GCE_GPU_MACHINE_TYPES
  statuses:
    description: Instance statuses to keep.
    type: list
    elements: str
    default: [RUNNING]
    env:
      - name: GCP_GCE_GPU_STATUSES
  server_side_filter:
    description:
      - Send the machine type and status expressions to the API so that only matching VMs are transferred.
    type: bool
    default: true
    env:
      - name: GCP_GCE_GPU_SERVER_SIDE_FILTER
  hostnames:
    description:
      - Preference list for the inventory hostname; the first entry with a value wins.
      - Entries are V(name), V(private_ip) (nic0), V(public_ip) (nic0), V(id), V(zone), V(project),
        V(labels.<key>), or a dict C({name, prefix, separator}) whose values are such entries
        (C(separator) defaults to C(_)).
    type: list
    elements: raw
    default: [name]
    env:
      - name: GCP_GCE_GPU_HOSTNAMES
  duplicate_hostnames:
    description:
      - What to do when two instances get the same hostname (instance names are unique only per project and zone).
      - V(qualify) names each of them C(<name>.<zone>.<project>) and warns; V(error) stops.
      - Hosts are never merged.
    type: str
    default: qualify
    choices: [qualify, error]
    env:
      - name: GCP_GCE_GPU_DUPLICATE_HOSTNAMES
  ansible_host_source:
    description: Where C(ansible_host) comes from.
    type: str
    default: private_ip
    choices: [private_ip, public_ip, name]
    env:
      - name: GCP_GCE_GPU_ANSIBLE_HOST_SOURCE
  strict_permissions:
    description:
      - When false, a project that answers 403 (no permission, API disabled) is skipped with a warning.
      - The same holds for the networks of a Shared VPC host project that the credentials may not read
        (C(compute.networks.get)) - by default the inventory stops with one line naming the host project,
        the networks and the hosts on them; when false, those hosts are left out with a warning. A host is
        never given a NIC without its VPC MTU.
    type: bool
    default: true
    env:
      - name: GCP_GCE_GPU_STRICT_PERMISSIONS
  max_workers:
    description: Size of the thread pool that lists projects, zones and networks in parallel.
    type: int
    default: 16
    env:
      - name: GCP_GCE_GPU_MAX_WORKERS
  host_vars:
    description:
      - Which host variables each host keeps.
      - V(minimal) keeps what the collection's roles, playbooks and AWX project read - C(gpu_family),
        C(gpu_transport), C(gce_project), C(gce_zone), C(gce_name), C(gce_status), C(gce_topology), C(gce_nics)
        and C(gpu_nics), whose NIC records keep C(name), C(network), C(ip), C(mtu) and C(mac) - plus C(ansible_host).
      - V(full) also keeps C(gpu_class), C(gce_id), C(gce_machine_type), C(gce_labels), C(gce_provisioning_model),
        C(gce_placement_policies), C(gce_reservation), C(gce_accelerators), and the C(nic_type), C(subnetwork)
        and C(public_ip) of each NIC.
      - ansible-core pays for every value an inventory sets, when it is added and whenever the host's variables are
        resolved or listed; V(minimal) keeps about 60% of the values of V(full).
      - O(compose), O(groups), O(keyed_groups), O(hostnames) and the default groups read every variable either way,
        and the cache holds every variable, so changing this option needs no new API call.
    type: str
    default: minimal
    choices: [minimal, full]
    env:
      - name: GCP_GCE_GPU_HOST_VARS
  extra_host_vars:
    description:
      - Host variables of O(host_vars=full) to keep as well with O(host_vars=minimal), for example C([gce_labels]).
      - An unknown name is an error that names the closest valid one.
    type: list
    elements: str
    default: []
    env:
      - name: GCP_GCE_GPU_EXTRA_HOST_VARS
  keep_raw:
    description: Add the raw instance resource (no field mask) as C(gce_raw), with either O(host_vars).
    type: bool
    default: false
    env:
      - name: GCP_GCE_GPU_KEEP_RAW
  fleet_ledger:
    description:
      - Path of the fleet ledger on the controller (the file M(gpudirect.gcp.fleet_ledger) keeps; the playbooks'
        C(gpudirect_fleet_ledger)). A C(gs://) ledger is not read here.
      - A VM whose physical host (C(gce_topology.host)) has records in the last O(fleet_ledger_days) days joins the
        group C(gpu_host_history), with the host variable C(gpu_host_history) saying why in one line - also a VM
        made since, on a host with history. The ledger is read at every parse, never cached.
      - A ledger that cannot be read is a warning naming it; the inventory is built without the group.
    type: str
    version_added: 1.2.0
    env:
      - name: GCP_GCE_GPU_FLEET_LEDGER
  fleet_ledger_days:
    description: How many days back O(fleet_ledger) is read for C(gpu_host_history).
    type: int
    version_added: 1.2.0
    default: 30
    env:
      - name: GCP_GCE_GPU_FLEET_LEDGER_DAYS
notes:
  - Every option can be set through the environment, which is how AWX passes the variables of an
    inventory source sourced from a project.
  - "A refresh (C(--flush-cache), C(meta: refresh_inventory)) writes the new result back to the cache;
    a cache hit makes no API call and builds no credentials."
  - Answers are requested gzip-compressed (Google APIs compress when the user agent says C(gzip)),
    with a field mask, so a page of 500 instances is tens of kilobytes on the wire.
  - While it builds hosts the plugin pauses Python's cyclic garbage collector, and afterwards moves
    the objects built so far into the collector's permanent generation (C(gc.freeze)); with 1,000 hosts
    this saves about a second of C(ansible-inventory --list).
"""

EXAMPLES = r"""
# inventory/prod.gce_gpu.yml: every A3/A4 VM of the project in gpu_nodes, the group the playbooks target
plugin: gpudirect.gcp.gce_gpu
projects: [ml-training-prod]
groups:
  gpu_nodes: gpu_family is not none

# More configuration files, one each (a file holds one configuration):

# Service account key, two projects, only two zones, hostnames from a label
#   plugin: gpudirect.gcp.gce_gpu
#   projects: [ml-a, ml-b]
#   groups:
#     gpu_nodes: gpu_family is not none
#   zones: [us-central1-a, europe-west4-b]
#   auth_kind: serviceaccount
#   service_account_file: /etc/gcp/inventory-sa.json
#   hostnames:
#     - labels.node-name
#     - name
#   filters:
#     - labels.team eq "research"
#   keyed_groups:
#     - key: gce_labels.pool
#       prefix: pool

# Cache for an hour (a --flush-cache run refreshes it)
#   plugin: gpudirect.gcp.gce_gpu
#   projects: [ml-training-prod]
#   groups:
#     gpu_nodes: gpu_family is not none
#   impersonate_service_account: inventory@ml-training-prod.iam.gserviceaccount.com
#   cache: true
#   cache_plugin: ansible.builtin.jsonfile
#   cache_connection: ~/.cache/gce_gpu
#   cache_timeout: 3600

# Keep the labels on each host too; group by sub-block, and by reservation (which keyed_groups
# reads although host_vars: minimal does not keep it on the host)
#   plugin: gpudirect.gcp.gce_gpu
#   projects: [ml-training-prod]
#   groups:
#     gpu_nodes: gpu_family is not none
#   extra_host_vars: [gce_labels]
#   keyed_groups:
#     - key: gce_topology.subblock
#       prefix: sb
#     - key: gce_reservation | default('none', true)
#       prefix: reservation
"""

import difflib
import gc
import hashlib
import json
import os
import re
import time
from concurrent.futures import ThreadPoolExecutor

from ansible import constants as C
from ansible import release
from ansible.errors import AnsibleError, AnsibleParserError
from ansible.module_utils.common.text.converters import to_text
from ansible.plugins.inventory import BaseInventoryPlugin, Cacheable, Constructable
from ansible.utils.display import Display

from ansible_collections.gpudirect.gcp.plugins.plugin_utils.fleet import ledger, ledger_store
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.gce import gce_api
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.gce import gce_hosts
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.core.unsafe import UNTRUSTED_BY_DEFAULT, make_unsafe

display = Display()

# The shape of a cached answer; a new one keys a new cache entry instead of serving hosts of the old shape.
_CACHE_FORMAT = 2
_REGEX_FORM = re.compile(r"\s(eq|ne)\s")
_CHOICES = {
    "auth_kind": gce_api.AUTH_KINDS,
    "duplicate_hostnames": ("qualify", "error"),
    "ansible_host_source": gce_hosts.ANSIBLE_HOST_SOURCES,
    "host_vars": gce_hosts.HOST_VARS_MODES,
}


def _as_exprs(entry, option):
    if isinstance(entry, str):
        return [entry]
    if isinstance(entry, (list, tuple)) and all(isinstance(e, str) for e in entry):
        return list(entry)
    raise AnsibleParserError("option %s: entry %r is neither a filter string nor a list of them" % (option, entry))


def _join(exprs):
    """AND several expressions the way the Compute API accepts: each in parentheses."""
    exprs = [e.strip() for e in exprs if e and e.strip()]
    if len(exprs) == 1:
        return exprs[0]
    return " ".join(e if e.startswith("(") and e.endswith(")") else "(%s)" % e for e in exprs)


def _name(inst):
    return inst.get("name") if isinstance(inst, dict) and inst.get("name") else "?"


# The group of the VMs whose physical host has recent history in the fleet ledger, and the host variable saying why
HISTORY_GROUP = "gpu_host_history"


def host_history(path, days, now=None):
    """({physical host: why, in one line}, [warnings]) of the hosts with records in a local fleet ledger in the
    last days; ({}, [one line]) where it cannot be read."""
    if path and str(path).startswith(ledger_store.SCHEME):
        return {}, ["gce_gpu: option fleet_ledger: %s is in Cloud Storage; the inventory reads a local ledger "
                    "file only" % path]
    if days is None or days < 1:
        return {}, ["gce_gpu: option fleet_ledger_days must be 1 or more, got %s; %s not read" % (days, path)]
    try:
        records, skipped = ledger_store.read_records(ledger_store.parse(path)[1])
    except (ledger_store.StoreError, ledger.LedgerError) as exc:
        return {}, ["gce_gpu: option fleet_ledger: %s; no VM is put in %s" % (to_text(exc), HISTORY_GROUP)]
    now = time.time() if now is None else now
    warnings = ["gce_gpu: %s" % line for line in skipped]
    return dict((r["host"], r["why"]) for r in ledger.recent_hosts(records, days, now)), warnings


# The sources this process has parsed: a second parse of one is a refresh inside a running play
# (meta: refresh_inventory), which must fail the way ansible-core fails it, never end the process.
_PARSED = set()


def _stop_on_error():
    """Whether the run stops when a source does not parse ([inventory] any_unparsed_is_failed)."""
    try:
        return bool(C.config.get_config_value("INVENTORY_ANY_UNPARSED_IS_FAILED"))
    except AnsibleError:
        return False


def _exit_in_one_line(path, exc):
    """Name the fault in one line and end the run, as any_unparsed_is_failed asks. ansible-core would
    print the same message three times (the plugin's failure, its cause, the source's), followed by the
    complaints of every other enabled plugin about a file that was never theirs."""
    text = " ".join(to_text(getattr(exc, "message", None) or exc).split())
    if not text.startswith("gce_gpu: "):
        text = "gce_gpu: " + text
    line = "%s (inventory %s)" % (text, path)
    if tuple(int(p) for p in re.findall(r"\d+", release.__version__)[:2]) < (2, 19):
        # older cores wrap an error at 79 columns unless told not to (then it reads "ERROR! ...");
        # 2.19 and newer print it on one line and ignore the argument
        display.error(line, wrap_text=False)
    else:
        display.error(line)
    # SystemExit passes the inventory manager's `except Exception`, which would print it all again
    raise SystemExit(1)


class InventoryModule(BaseInventoryPlugin, Constructable, Cacheable):

    NAME = "gpudirect.gcp.gce_gpu"

    def __init__(self):
        super(InventoryModule, self).__init__()
        self.stats = {}
        self._warnings = []

    def verify_file(self, path):
        if not super(InventoryModule, self).verify_file(path):
            return False
        return path.endswith(("gce_gpu.yml", "gce_gpu.yaml"))

    # -- options --------------------------------------------------------------

    def _read_options(self):
        opts = dict((name, self.get_option(name)) for name in (
            "projects", "zones", "filters", "include_filters", "exclude_filters", "machine_types",
            "statuses", "server_side_filter", "hostnames", "duplicate_hostnames", "ansible_host_source",
            "strict_permissions", "max_workers", "keep_raw", "auth_kind", "api_endpoint", "timeout",
            "retries", "retry_max_time", "project_timeout", "host_vars", "extra_host_vars", "connect_timeout"))
        endpoint = opts["api_endpoint"] or ""
        if not re.match(r"^https?://[^/\s]+", endpoint):
            raise AnsibleParserError("option api_endpoint: %r is not a URL with a scheme; write it as "
                                     "https://HOST (or http://HOST:PORT for a test server)" % endpoint)
        if opts["project_timeout"] is not None and opts["project_timeout"] < 0:
            raise AnsibleParserError("option project_timeout must be 0 (no limit) or more, got %s"
                                     % opts["project_timeout"])
        for name, choices in _CHOICES.items():
            if opts[name] not in choices:
                raise AnsibleParserError("option %s has unknown value %r; expected one of: %s"
                                         % (name, opts[name], ", ".join(choices)))
        opts["projects"] = [p.strip() for p in opts["projects"] or [] if p and p.strip()]
        if not opts["projects"]:
            raise AnsibleParserError("option projects is empty: list at least one project ID "
                                     "(or set GCP_PROJECT)")
        if not opts["machine_types"]:
            opts["machine_types"] = gce_hosts.default_machine_types()
        if not opts["statuses"]:
            raise AnsibleParserError("option statuses is empty: list at least one status, e.g. RUNNING")
        if not opts["connect_timeout"] or opts["connect_timeout"] <= 0:
            raise AnsibleParserError("option connect_timeout must be more than 0 seconds, got %s"
                                     % opts["connect_timeout"])
        if opts["max_workers"] < 1:
            raise AnsibleParserError("option max_workers must be at least 1, got %d" % opts["max_workers"])
        try:
            gce_hosts.validate_hostnames(opts["hostnames"] or [])
        except ValueError as exc:
            raise AnsibleParserError("option hostnames: %s" % exc)
        if not opts["hostnames"]:
            raise AnsibleParserError("option hostnames is empty")
        try:
            gce_hosts.kept_vars(opts["host_vars"], opts["extra_host_vars"] or [])
        except ValueError as exc:
            raise AnsibleParserError(str(exc))
        opts["extra_host_vars"] = sorted(set(opts["extra_host_vars"] or []))
        for name in ("include_filters", "exclude_filters"):
            opts[name] = [_as_exprs(e, name) for e in opts[name] or []]
        opts["filters"] = _as_exprs(opts["filters"] or [], "filters")
        return opts

    def _queries(self, opts):
        """(include queries, exclude queries) as API filter strings (None = no filter)."""
        ours = []
        if opts["server_side_filter"]:
            ours = ['machineType eq "%s"' % gce_hosts.machine_type_regex(opts["machine_types"]),
                    'status eq "%s"' % "|".join(gce_hosts.regex_escape(s) for s in opts["statuses"])]

        def compose(exprs):
            # Regex-form and comparison-form expressions cannot be mixed in one filter.
            if all(_REGEX_FORM.search(" %s " % e.strip("() ")) for e in exprs):
                return _join(exprs + ours) or None
            return _join(exprs) or None

        includes = [compose(opts["filters"])]
        for exprs in opts["include_filters"]:
            includes.append(compose(exprs))
        excludes = [compose(exprs) for exprs in opts["exclude_filters"]]
        return includes, excludes

    # -- API ------------------------------------------------------------------

    def _client(self, opts):
        missing = gce_api.check_dependencies()
        if missing:
            raise AnsibleParserError(missing)
        for text in gce_api.auth_warnings(opts["auth_kind"], opts["api_endpoint"],
                                          self.get_option("service_account_file")):
            display.warning(text)
        creds = gce_api.build_credentials(
            auth_kind=opts["auth_kind"],
            service_account_file=self.get_option("service_account_file"),
            service_account_contents=self.get_option("service_account_contents"),
            access_token=self.get_option("access_token"),
            impersonate_service_account=self.get_option("impersonate_service_account"),
            scopes=self.get_option("scopes"),
            iam_endpoint=self.get_option("iam_endpoint"))
        return gce_api.ComputeClient(
            creds, endpoint=opts["api_endpoint"], timeout=opts["timeout"], retries=opts["retries"],
            retry_max_time=opts["retry_max_time"], pool_size=opts["max_workers"],
            project_timeout=opts["project_timeout"] or None, log=display.v,
            connect_timeout=opts["connect_timeout"])

    def _warn(self, text):
        """A warning about this answer: shown now, and kept with it in the cache."""
        self._warnings.append(text)
        display.warning(text)

    def _fetch(self, opts):
        """List, classify and name every host: returns [[hostname, vars], ...]."""
        started = time.monotonic()
        includes, excludes = self._queries(opts)
        fields = None if opts["keep_raw"] else gce_api.INSTANCE_FIELDS
        client = self._client(opts)
        try:
            client.authenticate()
            api_started = time.monotonic()
            with ThreadPoolExecutor(max_workers=opts["max_workers"]) as pool:
                jobs = []  # (project, kind, future)
                for project in opts["projects"]:
                    for kind, queries in (("include", includes), ("exclude", excludes)):
                        for query in queries:
                            if opts["zones"]:
                                for zone in opts["zones"]:
                                    jobs.append((project, kind, zone, pool.submit(
                                        client.zone_instances, project, zone, query, fields)))
                            else:
                                jobs.append((project, kind, None, pool.submit(
                                    client.aggregated_instances, project, query, fields)))
                # Each project's networks are listed alongside its instances, so VPC MTUs
                # cost no extra round trip; networks of other projects (shared VPC) get a
                # networks.get each afterwards.
                net_jobs = [pool.submit(client.networks, project) for project in opts["projects"]]
                found, dropped, skipped, left_out = {}, set(), set(), []
                for project, kind, zone, future in jobs:
                    try:
                        result = future.result()
                    except gce_api.GceApiError as exc:
                        if exc.status == 403 and not opts["strict_permissions"]:
                            if project not in skipped:
                                self._warn("gce_gpu: skipping %s" % exc)
                            skipped.add(project)
                            continue
                        raise
                    if zone is None:
                        instances, unreachable, warnings = result
                        for scope in unreachable:
                            self._warn("gce_gpu: project %s: %s was unreachable; its instances are "
                                       "missing from this inventory" % (project, scope))
                        for text in warnings:
                            self._warn("gce_gpu: project %s: %s" % (project, text))
                    else:
                        instances = result
                    for inst in instances:
                        where = (gce_hosts.instance_zone(inst) or zone) if isinstance(inst, dict) else None
                        if not where or not isinstance(inst.get("name"), str) or not inst["name"]:
                            left_out.append(("project %s: instance %s" % (project, _name(inst)),
                                             "no zone in its record, its self link or its listing"))
                            continue
                        key = (project, where, inst["name"])
                        if kind == "include":
                            found[key] = inst
                        else:
                            dropped.add(key)
                kept = [(key[0], inst) for key, inst in sorted(found.items()) if key not in dropped]
                # Classify on the controller even when the API already filtered.
                wanted = set(opts["machine_types"])
                usable = []
                for p, inst in kept:
                    if inst.get("status") not in opts["statuses"]:
                        continue
                    # a machine type the configuration leaves out is no record to warn about
                    if isinstance(inst.get("machineType"), str) and inst["machineType"] \
                            and gce_hosts.instance_machine_type(inst) not in wanted:
                        continue
                    why = gce_hosts.left_out(inst)
                    if why:
                        left_out.append(("project %s: instance %s in %s" % (p, inst["name"], gce_hosts.instance_zone(inst)),
                                         why))
                    else:
                        usable.append((p, inst))
                kept = usable
                listed = {}
                for future in net_jobs:
                    try:
                        listed.update(future.result())
                    except gce_api.GceApiError:
                        pass  # no compute.networks.list: fall back to networks.get below
                mtus, unread = self._network_mtus(client, pool, kept, listed)
            api_done = time.monotonic()
        finally:
            client.close()
        error, notes, kept = gce_hosts.unread_networks(unread, kept, opts["strict_permissions"])
        if error:
            raise gce_api.GceApiError(error)
        for text in notes:
            self._warn("gce_gpu: %s" % text)
        for what, why in left_out:
            self._warn("gce_gpu: %s left out: %s" % (what, why))
        if left_out:
            reasons = {}
            for _what, why in left_out:
                reason = re.sub(r"^\d+ NICs, but .*", "fewer NICs than the family has",
                                re.sub(r"^GPU NIC \S+ has no", "a GPU NIC without an", why))
                reasons[reason] = reasons.get(reason, 0) + 1
            self._warn("gce_gpu: %d instance(s) left out: %s" % (
                len(left_out), ", ".join("%d: %s" % (n, r) for r, n in sorted(reasons.items()))))
        records = []
        for project, inst in kept:
            # left_out() passed these records already
            hvars, why = gce_hosts.checked_host_vars(inst, project, mtus)
            if why:
                self._warn("gce_gpu: project %s: instance %s left out: %s" % (project, _name(inst), why))
                continue
            if opts["keep_raw"]:
                hvars["gce_raw"] = inst
            records.append(hvars)
        try:
            hosts, warnings = gce_hosts.assign_hostnames(records, opts["hostnames"], opts["duplicate_hostnames"])
        except ValueError as exc:
            raise AnsibleParserError("gce_gpu: %s" % exc)
        for text in warnings:
            self._warn("gce_gpu: %s" % text)
        self.stats.update({"requests": client.request_count, "retries": client.retry_count,
                           "seconds": round(time.monotonic() - started, 3),
                           "setup": round(api_started - started, 3), "api": round(api_done - api_started, 3)})
        return [[name, hvars] for name, hvars in hosts]

    def _network_mtus(self, client, pool, kept, listed):
        """({network URL: MTU}, {network URL: the error reading it}); a network of another project
        (a Shared VPC's host project) is read there with networks.get."""
        mtus = dict((url, mtu or gce_hosts.DEFAULT_VPC_MTU) for url, mtu in listed.items())
        unread = {}
        urls = sorted(set(nic.get("network") for _p, inst in kept
                          for nic in inst.get("networkInterfaces") or [] if isinstance(nic.get("network"), str)
                          and nic.get("network")) - set(mtus))
        futures = [(url, pool.submit(client.network, url)) for url in urls]
        for url, future in futures:
            try:
                mtus[url] = future.result().get("mtu") or gce_hosts.DEFAULT_VPC_MTU
            except gce_api.GceApiError as exc:
                unread[url] = exc
        return mtus, unread

    # -- inventory ------------------------------------------------------------

    def _populate(self, hosts, opts):
        """Add the hosts with the variables host_vars keeps; groups and constructed options see them all."""
        strict = self.get_option("strict")
        compose, groups, keyed = (self.get_option(k) for k in ("compose", "groups", "keyed_groups"))
        names, nic_keys = gce_hosts.kept_vars(opts["host_vars"], opts["extra_host_vars"])
        if opts["keep_raw"]:
            names += ("gce_raw",)
        unplaced = values = 0
        history = {}
        if self.get_option("fleet_ledger"):
            history, notes = host_history(self.get_option("fleet_ledger"), self.get_option("fleet_ledger_days"))
            for text in notes:
                display.warning(text)
        for name, hvars in hosts:
            # Remote strings must never be templated. ansible-core >= 2.19 trusts no value an
            # inventory plugin sets, so the walk, costly on large fleets, is for older cores.
            if not UNTRUSTED_BY_DEFAULT:
                hvars = make_unsafe(hvars)
            host = self.inventory.add_host(name)
            for group in gce_hosts.groups_for(hvars):
                self.inventory.add_group(group)
                self.inventory.add_child(group, host)
            if not hvars.get("gce_topology"):
                unplaced += 1
            kept = gce_hosts.slim(hvars, names, nic_keys)
            for key, value in kept.items():
                self.inventory.set_variable(host, key, value)
            why = history.get((hvars.get("gce_topology") or {}).get("host")) if history else None
            if why:
                self.inventory.add_group(HISTORY_GROUP)
                self.inventory.add_child(HISTORY_GROUP, host)
                self.inventory.set_variable(host, HISTORY_GROUP, make_unsafe(why))
            address = gce_hosts.ansible_host(opts["ansible_host_source"], hvars)
            if address:
                self.inventory.set_variable(host, "ansible_host", make_unsafe(address))
            values += len(kept) + (1 if address else 0)
            if not (compose or groups or keyed):
                continue
            # every variable of host_vars: full, whatever the host keeps; then what compose made wins
            all_vars = self._all_vars(host, hvars)
            self._set_composite_vars(compose, all_vars, host, strict=strict)
            all_vars = self._all_vars(host, hvars, compose)
            self._add_host_to_composed_groups(groups, all_vars, host, strict=strict)
            self._add_host_to_keyed_groups(keyed, all_vars, host, strict=strict)
        self.stats.update({"hosts": len(hosts), "unplaced": unplaced, "vars_per_host": values / max(1, len(hosts))})

    def _all_vars(self, host, hvars, composed=None):
        """The host's variables (ansible_host, inventory_hostname, ...) with every one of hvars in full,
        except those compose set."""
        out = self.inventory.get_host(host).get_vars()
        for key, value in hvars.items():
            if not composed or key not in composed:
                out[key] = value
        return out

    def parse(self, inventory, loader, path, cache=True):
        super(InventoryModule, self).parse(inventory, loader, path, cache)
        first = path not in _PARSED
        _PARSED.add(path)
        # Building a large inventory allocates hundreds of thousands of objects and no
        # reference cycles; the cyclic collector would rescan the whole heap many times.
        collecting = gc.isenabled()
        gc.disable()
        try:
            self._parse(path, cache)
        except AnsibleError as exc:
            if first and _stop_on_error():
                _exit_in_one_line(path, exc)
            raise
        finally:
            if collecting:
                gc.enable()
        # Inventory data lives as long as the process: park it in the permanent generation
        # so later collections (the JSON dump, every play) stop rescanning it.
        gc.freeze()

    def _check_keys(self, config):
        """Name an option this plugin does not know (a typo is otherwise silently ignored)."""
        known = set(self._options)
        for key in sorted(config):
            if key not in known:
                close = difflib.get_close_matches(key, sorted(known), n=1)
                raise AnsibleParserError("gce_gpu: unknown option %s%s" % (
                    key, ("; did you mean %s?" % close[0]) if close else ""))

    def _answer_key(self, path, opts):
        """The cache key: the file and every option that changes the answer; credentials only hashed."""
        creds = dict((name, self.get_option(name)) for name in (
            "auth_kind", "service_account_file", "service_account_contents", "access_token",
            "impersonate_service_account", "scopes", "iam_endpoint"))
        key_file = creds.get("service_account_file") or os.environ.get("GOOGLE_APPLICATION_CREDENTIALS")
        if key_file and os.path.isfile(key_file):
            with open(key_file, "rb") as fh:
                creds["key_file_sha256"] = hashlib.sha256(fh.read()).hexdigest()
        # host_vars and extra_host_vars only choose what is added from the cached answer, which holds every variable
        answer = dict((k, v) for k, v in opts.items() if k not in ("max_workers", "timeout", "connect_timeout", "retries",
                                                                   "retry_max_time", "project_timeout",
                                                                   "host_vars", "extra_host_vars"))
        answer["format"] = _CACHE_FORMAT
        answer["credentials"] = hashlib.sha256(json.dumps(creds, sort_keys=True, default=str).encode()).hexdigest()
        digest = hashlib.sha256(json.dumps(answer, sort_keys=True, default=str).encode()).hexdigest()[:16]
        return "%s_%s" % (self.get_cache_key(path), digest)

    def _parse(self, path, cache):
        config = self._read_config_data(path)
        self._check_keys(config)
        opts = self._read_options()
        cache_key = self._answer_key(path, opts)
        use_cache = self.get_option("cache")
        read_cache = use_cache and cache
        update_cache = use_cache and not cache
        started = time.monotonic()
        hosts = None
        self.stats = {"requests": 0, "cache_hit": False}
        self._warnings = []
        if read_cache:
            try:
                cached = self._cache[cache_key]
                hosts, notes = (cached.get("hosts"), cached.get("warnings") or []) if isinstance(cached, dict) \
                    else (cached, [])
                self.stats["cache_hit"] = True
                for text in notes:
                    display.warning("%s (cached answer: flush the cache to ask again)" % text)
            except KeyError:
                update_cache = True
        if hosts is None:
            try:
                hosts = self._fetch(opts)
            except gce_api.GceApiError as exc:
                raise AnsibleParserError("gce_gpu: %s" % to_text(exc))
        if update_cache:
            self._cache[cache_key] = {"hosts": hosts, "warnings": self._warnings}
        self._populate(hosts, opts)
        self._summary(opts)
        display.vvv("gce_gpu: parse took %.3f s (%s)" % (
            time.monotonic() - started, "cache hit" if self.stats.get("cache_hit") else "API"))

    def _summary(self, opts):
        """One line for the whole answer: hosts, those without placement data, where the answer came from."""
        stats = self.stats
        line = "gce_gpu: %d hosts" % stats["hosts"]
        if stats["unplaced"]:
            line += ", %d of them without placement data (gce_topology is {})" % stats["unplaced"]
        line += "; host_vars %s (%.1f variables per host)" % (opts["host_vars"], stats["vars_per_host"])
        if stats.get("cache_hit"):
            line += "; from the cache"
        else:
            line += ("; %(requests)d API requests (%(retries)d retries) in %(seconds).3f s "
                     "(client set-up %(setup).3f s, API calls %(api).3f s)" % stats)
        display.v(line)
