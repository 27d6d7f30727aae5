"""Schemathesis hooks of .ci/schemathesis.sh: strategies for the GraphQL schema's custom scalars, and five narrow
exemptions, where no schema can say what the server accepts. Anything else schemathesis finds is fixed at the cause
(the document must describe what the server does).

REST (/openapi.json):
- Records and the audit trail: `cursor` is an opaque value with a MAC that the server issued (`nextCursor` of an earlier page); no schema
  can tell those strings from others, so a made-up one is rightly 400 INVALID_CURSOR. Only that refusal of a query
  that carries a cursor is dropped; the cursor's rules are covered by the records integration tests.
- Audit trail: `to` after `from` is a rule between two parameters; such a window is rightly 400
  INVALID_RECORD_QUERY ("to must be after from."). Only that refusal is dropped (test/integration/console/audit.test.ts).
- Decision export: `from` and `to` are each a date-time, but that `to` lies after `from`, within 31 days of it and both
  in years 0001 to 9999 is a rule between two parameters (and of the database) that no schema states; such a window is
  rightly 400 INVALID_RECORD_QUERY. Only those refusals are dropped; the window's rules are covered by the export's
  integration tests (test/integration/console/decision-export.test.ts).
- GraphQL through REST: the body's `query` is a GraphQL document, a language of its own, so a schema-valid body such as
  {"query": "0"} is rightly a 400 GraphQL error. Only 400 answers in GraphQL's error shape are dropped.

GraphQL (/graphql, the schema read by introspection; docs/graphql.md, "Fuzzing"):
- A refusal is a 200 carrying `errors`: GraphQL's convention for a request that ran (docs/graphql.md, "Order of
  checks and HTTP statuses"). The inputs carry rules the SDL cannot state (names, `eventType`, ownership, budgets,
  windows), so a mutation or a read that the server refuses by those rules answers 200 with the field null and an
  error whose `extensions` carry REST's code and status; schemathesis takes any such error for a server error
  (ST113). Dropped only when every error is a refusal of the contract: a code of the API's error table
  (services/runtime/src/contracts/error-codes.ts) with one of that code's statuses, and that status a 4xx. A 5xx,
  `internal_error`, an unknown code or a status the code does not have still fails.
- Limits: depth, aliases, directives, cost and tokens are bounded (CONTRACT section 9; docs/graphql.md, "Limits") and
  no SDL says so; a generated document past one of them is rightly refused before it runs, 400 INVALID_REQUEST
  naming the limit. Schemathesis calls that refusing valid data (ST206); dropped only for those messages.
"""

import datetime
import json
import os
import re
from pathlib import Path

import schemathesis
from hypothesis import assume
from hypothesis import strategies as st
from schemathesis.graphql import nodes

SCHEMA_VALID_REQUEST_REJECTED = "ST202"
GRAPHQL_SERVER_ERROR = "ST113"
GRAPHQL_CLIENT_ERROR = "ST206"

# The export's window refusals (gateway/src/rest/decision-export.ts, decisionExportProblem in
# services/runtime/src/contracts/decision-search.ts).
EXPORT_WINDOW_MESSAGE = re.compile(r"^query(\.to must be after from|: the window may span at most|\.(from|to) must lie in years)")

ERROR_CODES_FILE = Path(__file__).resolve().parent.parent / "services/runtime/src/contracts/error-codes.ts"


def _error_table():
    """Code -> statuses, read from the API's one table of error codes."""
    text = ERROR_CODES_FILE.read_text(encoding="utf-8")
    table = {
        code: {int(status) for status in statuses.split(",")}
        for code, statuses in re.findall(r"^\s+(\w+): \{\s*statuses: \[([0-9, ]+)\]", text, re.MULTILINE)
    }
    if "invalid_action" not in table or "not_found" not in table:
        raise RuntimeError(f"schemathesis_hooks: no error table found in {ERROR_CODES_FILE}")
    return table


ERROR_TABLE = _error_table()

# GraphQL Armor's refusals (gateway/src/graphql/limits.ts) and graphql-js's token limit (its own spelling).
LIMIT_MESSAGE = re.compile(
    r"^(Query depth limit of \d+ exceeded|Aliases limit of \d+ exceeded|Directives limit of \d+ exceeded"
    r"|Query Cost limit of \d+ exceeded|Syntax Error: Document contains more that \d+ tokens)"
)


def _json(response):
    try:
        return response.json()
    except Exception:
        return None


def _errors(body):
    errors = body.get("errors") if isinstance(body, dict) else None
    return errors if isinstance(errors, list) and errors else None


def _contract_refusal(error):
    """An error carrying a code of the table, one of its statuses, and that status a 4xx."""
    extensions = error.get("extensions") if isinstance(error, dict) else None
    if not isinstance(extensions, dict):
        return False
    code, status = extensions.get("code"), extensions.get("status")
    return isinstance(status, int) and 400 <= status < 500 and status in ERROR_TABLE.get(code, ())


def _refused_field(response, body):
    """A request that ran (200, `data` present) and whose every error is a refusal of the contract."""
    errors = _errors(body)
    return errors is not None and response.status_code == 200 and "data" in body and all(map(_contract_refusal, errors))


def _limit_exceeded(response, body):
    """Refused before running (400, no `data`) for a documented limit only."""
    errors = _errors(body)
    return (
        errors is not None
        and response.status_code == 400
        and "data" not in body
        and all(
            isinstance(error, dict)
            and (error.get("extensions") or {}).get("code") == "INVALID_REQUEST"
            and LIMIT_MESSAGE.match(str(error.get("message", "")))
            for error in errors
        )
    )


@schemathesis.hook
def filter_failure(ctx, failure, case, response):
    """False drops the failure."""
    code = getattr(failure, "code", None)
    if code == GRAPHQL_SERVER_ERROR:
        return not _refused_field(response, _json(response))
    if code == GRAPHQL_CLIENT_ERROR:
        return not _limit_exceeded(response, _json(response))
    if code != SCHEMA_VALID_REQUEST_REJECTED or response.status_code != 400:
        return True
    body = _json(response)
    path = case.operation.path
    if path in ("/api/developer/v1/records", "/api/developer/v1/audit"):
        made_up_cursor = "cursor" in (case.query or {})
        refused_cursor = isinstance(body, dict) and body.get("error", {}).get("code") == "INVALID_CURSOR"
        if made_up_cursor and refused_cursor:
            return False
    if path == "/api/developer/v1/audit":
        # `to` must come after `from` (a rule between two parameters that the schema cannot state).
        query = case.query or {}
        error = body.get("error", {}) if isinstance(body, dict) else {}
        reversed_window = (
            "from" in query
            and "to" in query
            and error.get("code") == "INVALID_RECORD_QUERY"
            and "after" in str(error.get("message", ""))
        )
        return not reversed_window
    if path == "/api/developer/v1/decisions/export":
        error = body.get("error", {}) if isinstance(body, dict) else {}
        refused_window = error.get("code") == "INVALID_RECORD_QUERY" and EXPORT_WINDOW_MESSAGE.search(
            str(error.get("message", ""))
        )
        return not refused_window
    if path == "/graphql":
        graphql_error = isinstance(body, dict) and isinstance(body.get("errors"), list) and "data" not in body
        return not graphql_error
    return True


# ---- GraphQL: strategies for the custom scalars of gateway/src/graphql/schema.graphql (scalars.ts) ----
# Every value a scalar accepts can be drawn, bounds included, and nothing else: a value the scalar refuses is refused
# before any resolver runs and tests nothing (schemathesis's own negative cases cover refusals).

CREDITS_MAX = 10**12


def _uuid(bits, version):
    """The spec's UUID rule (validation/uuid.ts): version 1 to 8, RFC 4122 variant (8, 9, a or b)."""
    value = (bits & ~(0xF << 76) & ~(0x3 << 62)) | (version << 76) | (0x2 << 62)
    text = f"{value:032x}"
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


def _known_ids():
    """Ids of the developer's own objects, made by schemathesis.sh before the GraphQL run (a JSON list)."""
    path = os.environ.get("SCHEMATHESIS_GRAPHQL_IDS")
    if not path:
        return []
    with open(path, encoding="utf-8") as file:
        return [value for value in json.load(file) if isinstance(value, str)]


KNOWN_IDS = _known_ids()
UUIDS = st.one_of(
    st.builds(_uuid, st.integers(min_value=0, max_value=2**128 - 1), st.integers(min_value=1, max_value=8)),
    st.sampled_from(["00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff"]),
)
if KNOWN_IDS:
    # About a third of the draws: the developer's own objects, so that mutations and reads get past 404 not_found.
    UUIDS = st.one_of(UUIDS, st.sampled_from(KNOWN_IDS))


def _leap(year):
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def _days_from_civil(year, month, day):
    """Days since 1970-01-01 of a proleptic Gregorian date (year 0 included)."""
    year -= month <= 2
    era = year // 400
    year_of_era = year - era * 400
    day_of_year = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    return era * 146097 + year_of_era * 365 + year_of_era // 4 - year_of_era // 100 + day_of_year - 719468


# scalars.ts: the instant in UTC lies in years 0001 to 9999 (milliseconds, as Date.parse reads it).
DATE_TIME_MIN_MS = _days_from_civil(1, 1, 1) * 86_400_000
DATE_TIME_MAX_MS = _days_from_civil(9999, 12, 31) * 86_400_000 + 86_399_999


def _civil_from_days(days):
    """The proleptic Gregorian date of a day since 1970-01-01 (inverse of _days_from_civil)."""
    z = days + 719468
    era = z // 146097
    day_of_era = z - era * 146097
    year_of_era = (day_of_era - day_of_era // 1460 + day_of_era // 36524 - day_of_era // 146096) // 365
    day_of_year = day_of_era - (365 * year_of_era + year_of_era // 4 - year_of_era // 100)
    mp = (5 * day_of_year + 2) // 153
    month = mp + 3 if mp < 10 else mp - 9
    return year_of_era + era * 400 + (month <= 2), month, day_of_year - (153 * mp + 2) // 5 + 1


OFFSETS = st.one_of(
    st.just(("Z", 0, 0)),
    st.tuples(st.sampled_from("+-"), st.integers(min_value=0, max_value=23), st.integers(min_value=0, max_value=59)),
)


def _offset_seconds(sign, hours, minutes):
    return (hours * 3600 + minutes * 60) * (-1 if sign == "-" else 1)


def _render(instant_ms, offset, extra_digits):
    """An instant written in the given offset (`Z` when that would need a fifth year digit)."""
    sign, hours, minutes = offset
    local_ms = instant_ms + _offset_seconds(*offset) * 1000
    year, month, day = _civil_from_days(local_ms // 86_400_000)
    if year > 9999:
        return _render(instant_ms, ("Z", 0, 0), extra_digits)
    rest = local_ms % 86_400_000
    ms = rest % 1000
    clock = f"{rest // 3_600_000:02d}:{rest // 60_000 % 60:02d}:{rest // 1000 % 60:02d}"
    fraction = f".{ms:03d}{extra_digits}" if ms or extra_digits else ""
    zone = "Z" if sign == "Z" else f"{sign}{hours:02d}:{minutes:02d}"
    return f"{year:04d}-{month:02d}-{day:02d}T{clock}{fraction}{zone}"


@st.composite
def _any_date_time(draw):
    """Any text of the grammar: four-digit years (mostly near now), calendar-valid, seconds required, a fraction of
    any length, `Z` or an offset up to 23:59 either way; kept when the instant is in the range."""
    year = draw(st.one_of(st.integers(min_value=2024, max_value=2030), st.integers(min_value=0, max_value=9999)))
    month = draw(st.integers(min_value=1, max_value=12))
    days = [31, 29 if _leap(year) else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
    day = draw(st.integers(min_value=1, max_value=days))
    hour = draw(st.integers(min_value=0, max_value=23))
    minute = draw(st.integers(min_value=0, max_value=59))
    second = draw(st.integers(min_value=0, max_value=59))
    fraction = draw(st.one_of(st.just(""), st.from_regex(r"\A\.[0-9]{1,12}\Z")))
    offset = draw(OFFSETS)
    seconds = _days_from_civil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second - _offset_seconds(*offset)
    assume(DATE_TIME_MIN_MS <= seconds * 1000 + int((fraction[1:] + "000")[:3]) <= DATE_TIME_MAX_MS)
    zone = "Z" if offset[0] == "Z" else f"{offset[0]}{offset[1]:02d}:{offset[2]:02d}"
    return f"{year:04d}-{month:02d}-{day:02d}T{hour:02d}:{minute:02d}:{second:02d}{fraction}{zone}"


# Windows (decisionStats, simulateRule) reach the ledger only when `from` and `to` are close: instants up to 31 days
# after a few anchors (the start of today, the first and the last month of the range), in any offset.
_TODAY_MS = _days_from_civil(*datetime.datetime.now(datetime.timezone.utc).timetuple()[:3]) * 86_400_000
ANCHORS_MS = [_TODAY_MS, DATE_TIME_MIN_MS, DATE_TIME_MAX_MS + 1 - 31 * 86_400_000]
NEAR_ANCHOR = st.builds(
    _render,
    st.builds(
        int.__add__,
        st.sampled_from(ANCHORS_MS),
        # Within 6 hours (400 minute buckets) or within 31 days (simulateRule's longest window, 400 hour buckets).
        st.one_of(
            st.integers(min_value=0, max_value=6 * 3_600_000), st.integers(min_value=0, max_value=31 * 86_400_000 - 1)
        ),
    ),
    OFFSETS,
    st.sampled_from(["", "", "", "0", "000999"]),
)
DATE_TIMES = st.one_of(NEAR_ANCHOR, _any_date_time())


schemathesis.graphql.scalar("UUID", UUIDS.map(nodes.String))
schemathesis.graphql.scalar("DateTime", DATE_TIMES.map(nodes.String))
schemathesis.graphql.scalar("Credits", st.integers(min_value=0, max_value=CREDITS_MAX).map(nodes.Int))
schemathesis.graphql.scalar("PositiveCredits", st.integers(min_value=1, max_value=CREDITS_MAX).map(nodes.Int))
