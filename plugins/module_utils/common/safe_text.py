# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Text from nodes, tools and the API, made safe once where it enters an output.

Every report, journal line, metric label and drain reason takes its text
through here:
  - visible(): control characters (except tab and newline) and undecodable
    bytes become escapes (``\\x1b``, ``\\x00``, ``\\xff``): shown, never
    dropped, and valid in XML, HTML and UTF-8 for any input;
  - one_line(): the same with newline, carriage return, tab and the Unicode
    line separators escaped too, so a reason can never forge a second line;
  - secrets: one rule for what is secret (is_secret_name, mask_text,
    mask_argv, mask_env), applied to environments, command lines and output.

Plain Python, no ansible import: the node health agent ships it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

try:
    from html import escape as _html_escape
except ImportError:  # pragma: no cover - Python 2
    from cgi import escape as _html_escape

MASK = "********"

# C0 controls but tab and newline, DEL, C1 controls, lone surrogates (bytes that were not UTF-8,
# read with surrogateescape) and the two code points XML 1.0 forbids
_UNSAFE = re.compile(u"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")
# the same, plus tab, newline and the Unicode line and paragraph separators
_UNSAFE_LINE = re.compile(u"[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufffe\uffff]")
_NAMED = {u"\n": u"\\n", u"\r": u"\\r", u"\t": u"\\t"}

# One generous list: a name holding any of these is secret, whatever its case.  NCCL's own
# variables are tuning, never secrets (NCCL_IB_GID_INDEX would otherwise read as an index key).
SECRET_WORDS = ("TOKEN", "SECRET", "PASSW", "PASSPHRASE", "KEY", "CREDENTIAL", "BEARER", "AUTH", "COOKIE",
                "SESSION", "PRIVATE", "SIGNATURE", "CERT")
_SECRET_NAME = re.compile("|".join(SECRET_WORDS), re.I)
_NOT_SECRET_PREFIXES = ("NCCL_",)
# values that look like credentials wherever they appear: Google OAuth access and refresh tokens, OAuth
# client secrets and API keys, AWS access keys, GitHub, GitLab, Slack, Hugging Face and OpenAI-style
# tokens, JWTs, PEM private keys.  A JWT starts a word: tried inside "eyJeyJeyJ...", each try would
# scan to the token's end (quadratic).
_SECRET_VALUE = re.compile(
    r"ya29\.[\w.\-]+"
    r"|(?<![\w/])1//0[\w\-]{30,}"
    r"|GOCSPX-[\w\-]{20,}"
    r"|hf_[A-Za-z0-9]{30,}"
    r"|(?<![\w\-])sk-[\w\-]{20,}"
    r"|AIza[\w\-]{30,}"
    r"|AKIA[0-9A-Z]{16}"
    r"|gh[pousr]_[A-Za-z0-9]{20,}"
    r"|glpat-[\w\-]{20,}"
    r"|xox[abprs]-[\w\-]+"
    r"|(?<![\w\-])eyJ[\w\-]{8,}\.[\w\-]{8,}\.[\w\-]{8,}"
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)")
# NAME=value (an environment entry, mpirun's -x NAME=value, --name=value; "name = value" as config
# files write it, never "a == b"), a header's "Name: value" (a plain word before the colon:
# "auth.json: No such file" is a path, not a header), a quoted key of JSON or a Python dict
# ("access_token": "..."; the quotes are kept so JSON stays JSON).  The name is found first and its
# value read only when the name is secret: the value of any other name ("--env=HF_TOKEN=x",
# "Error: token=x") is searched like the rest of the text.  A name starts only where a word starts
# (the look-behind), a quoted key only at its quote: tried at every character of a long unbroken
# token, the pattern would scan to its end each time, a cost that grows with the square of its length.
_NAME = re.compile(r"(?<![\w.\-])(?P<name>[\w.\-]+)(?P<sep>[ \t]+=(?!=)[ \t]*|=[ \t]+(?!=)|=)"
                   r"|(?<![\w./\-])(?P<hname>[A-Za-z][\w\-]*)(?P<hsep>:\s+)"
                   r"|(?P<jq>[\"'])(?P<jname>[\w.\-]+)(?P=jq)(?P<jsep>[ \t]*:[ \t]*)")
_VALUE = re.compile(r"\"[^\"]*\"|'[^']*'|[^\s,;&]+")
_HEADER_VALUE = re.compile(r"[^\s,;&]+")
_JSON_VALUE = re.compile(r"\"(?:[^\"\\]|\\.)*\"|'[^']*'|[^\s,;&}\]]+")
# the last group of each form of _NAME: (the group holding the name, how its value is read)
_KINDS = {"sep": ("name", _VALUE.match), "hsep": ("hname", _HEADER_VALUE.match), "jsep": ("jname", _JSON_VALUE.match)}
# headers whose whole value is the credential, whatever its scheme ("Authorization: token ...",
# "Cookie: a=1; b=2"): masked to the end of the line or of the quoted argument
_WHOLE_HEADER = re.compile(r"(?<![\w./\-])(?P<name>(?:proxy-)?authorization|(?:set-)?cookie)(?P<sep>:[ \t]*)"
                           r"[^\r\n\"'<>]+", re.I)
# an option of a command line (a PEM key starts with "-" too, and must not pass for one)
_OPTION = re.compile(r"--?[A-Za-z][\w.\-]*\Z")
_BEARER = re.compile(r"\b(?P<scheme>Bearer|Basic)\s+[\w.~+/=\-]+", re.I)
# a URL's user-info: scheme://user:password@host keeps the user, a user-info with no password (a
# token used as the user name) is masked whole.  The password runs to the last "@" before the path
# (passwords hold "@").  A scheme starts a word and every scan stops at "/" or a blank, so no try
# reaches past the next "://".
_URL_USERINFO = re.compile(r"(?<![\w+.\-])(?P<scheme>[A-Za-z][\w+.\-]*://)(?P<user>[^\s/@:\"'<>]*)"
                           r"(?P<password>:[^\s/\"'<>]*)?@")


def to_text(value):
    """Any value as text; bytes are read as UTF-8, undecodable bytes kept for visible() to show."""
    if value is None:
        return u""
    if isinstance(value, bytes):
        return value.decode("utf-8", "surrogateescape")
    if not isinstance(value, type(u"")):
        return u"%s" % (value,)
    return value


def _escape(char):
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    if 0xdc80 <= code <= 0xdcff:  # one byte surrogateescape could not decode
        return u"\\x%02x" % (code - 0xdc00)
    if code <= 0xff:
        return u"\\x%02x" % code
    return u"\\u%04x" % code


def _table(pattern):
    """{code point: its escape} for every character the pattern matches: str.translate does the
    replacing in C, a regex with a Python callback per character would be ten times slower."""
    candidates = list(range(0xa0)) + [0x2028, 0x2029, 0xfffe, 0xffff] + list(range(0xd800, 0xe000))
    return dict((code, _escape(chr(code))) for code in candidates if pattern.match(chr(code)))


_VISIBLE_TABLE = _table(_UNSAFE)
_LINE_TABLE = _table(_UNSAFE_LINE)


def visible(value):
    """The text with every control character but tab and newline, and every undecodable byte, escaped."""
    text = to_text(value)
    return text.translate(_VISIBLE_TABLE) if _UNSAFE.search(text) else text


def html(value):
    """visible(), with markup escaped too: safe anywhere in an HTML page, attributes included."""
    return _html_escape(visible(value), quote=True)


def one_line(value, limit=None):
    """visible(), and newlines, tabs and line separators escaped too: always exactly one line.

    limit: the most characters kept; a longer text ends in '...'."""
    text = to_text(value)
    if limit:
        # an escape is never shorter than its character: what is cut here would be cut below
        text = text[:limit + 1]
    if _UNSAFE_LINE.search(text):
        text = text.translate(_LINE_TABLE)
    if limit and len(text) > limit:
        text = text[:max(limit - 3, 0)] + u"..."
    return text


def is_secret_name(name):
    """Whether a variable or option of this name holds a secret."""
    name = to_text(name).lstrip("-")
    return bool(_SECRET_NAME.search(name)) and not name.upper().startswith(_NOT_SECRET_PREFIXES)


def _mask_assignments(text):
    out, kept, pos = [], 0, 0  # text[kept:pos] is unchanged, not yet in out
    search = _NAME.search
    while True:
        match = search(text, pos)
        if not match:
            break
        group, read = _KINDS[match.lastgroup]
        name, pos = match.group(group), match.end()
        # the value is read only after a secret name: read after every name, "a=a=a=..." is quadratic
        value = _SECRET_NAME.search(name) and is_secret_name(name) and read(text, pos)
        if not value:
            continue
        value = value.group(0)
        if match.lastgroup == "jsep" and value[0] in "\"'":
            masked = value[0] + MASK + value[0]  # JSON stays JSON
        elif value.startswith(MASK):
            masked = value  # masked already by a rule before (a header's value up to a quote): the quote stays
        else:
            masked = MASK
        out.append(text[kept:pos])
        out.append(masked)
        pos = kept = pos + len(value)
    out.append(text[kept:])
    return "".join(out)


def _mask_userinfo(match):
    if match.group("password") is not None:
        return match.group("scheme") + match.group("user") + ":" + MASK + "@"
    if not match.group("user"):
        return match.group(0)
    return match.group("scheme") + MASK + "@"


def mask_text(value):
    """Text with every secret-looking value masked: NAME=value and "name": "value" of a secret name,
    authorization and cookie headers, bearer and basic credentials, a URL's user-info, and values that
    look like keys or tokens wherever they stand."""
    text = _SECRET_VALUE.sub(MASK, to_text(value))
    text = _WHOLE_HEADER.sub(lambda m: m.group("name") + m.group("sep") + MASK, text)
    text = _BEARER.sub(lambda m: m.group("scheme") + " " + MASK, text)
    text = _URL_USERINFO.sub(_mask_userinfo, text)
    return _mask_assignments(text)


def mask_argv(argv):
    """A command's arguments with secrets masked: NAME=value and --name=value of a secret name, the
    argument after a secret option (--token VALUE), and key-like values anywhere."""
    out = []
    hide_next = False
    for arg in argv or []:
        text = to_text(arg)
        if hide_next:
            out.append(MASK)
            hide_next = False
            continue
        if _OPTION.match(text) and is_secret_name(text):
            hide_next = True
            out.append(text)
            continue
        out.append(mask_text(text))
    return out


def mask_env(env):
    """An environment with the values of secret names masked (and key-like values anywhere)."""
    out = {}
    for key, value in (env or {}).items():
        out[key] = MASK if is_secret_name(key) else mask_text(value)
    return out
