"""Schemathesis hooks of .ci/schemathesis.sh: two narrow exemptions, where no JSON Schema can say what the server
accepts. Anything else schemathesis finds is fixed at the cause (the document must describe what the server does).

- Records: `cursor` is an opaque value with a MAC that the server issued (`nextCursor` of an earlier page); no schema
  can tell those strings from others, so a made-up one is rightly 400 INVALID_CURSOR. Only that refusal of a query
  that carries a cursor is dropped; the cursor's rules are covered by the records integration tests.
- GraphQL: the body's `query` is a GraphQL document, a language of its own, so a schema-valid body such as
  {"query": "0"} is rightly a 400 GraphQL error. Only 400 answers in GraphQL's error shape are dropped.
"""

import schemathesis

SCHEMA_VALID_REQUEST_REJECTED = "ST202"


def _json(response):
    try:
        return response.json()
    except Exception:
        return None


@schemathesis.hook
def filter_failure(ctx, failure, case, response):
    """False drops the failure."""
    if getattr(failure, "code", None) != SCHEMA_VALID_REQUEST_REJECTED or response.status_code != 400:
        return True
    body = _json(response)
    path = case.operation.path
    if path == "/api/developer/v1/records":
        made_up_cursor = "cursor" in (case.query or {})
        refused_cursor = isinstance(body, dict) and body.get("error", {}).get("code") == "INVALID_CURSOR"
        return not (made_up_cursor and refused_cursor)
    if path == "/graphql":
        graphql_error = isinstance(body, dict) and isinstance(body.get("errors"), list) and "data" not in body
        return not graphql_error
    return True
