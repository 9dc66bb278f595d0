"""Checks that a request to a jqmaster worker comes from the master: signed dispatches.

A worker registered with a `secret` (16-256 bytes) gets two more headers with every job:

    X-Jq-Timestamp: 1764312000                 (Unix seconds when the master sent it)
    X-Jq-Signature: v1=<lower-case hex>        (HMAC-SHA256 with the secret over
                                                timestamp + "." + the exact body bytes)

verify() checks both, before the body is decoded:

    from jq_signature import verify
    if not verify(secret, self.headers, body):
        ...answer 401 and do not run the job

Only the standard library; copy this file next to your worker.
"""

import hashlib
import hmac
import time

TOLERANCE = 300  # seconds: a timestamp further from our clock is refused (a replay, or a bad clock)


def _header(headers, name):
    """A header's value from http.server's headers, a dict, or a list of pairs; any case."""
    if hasattr(headers, "get_all"):  # email.message.Message (http.server): case-insensitive
        return headers.get(name)
    pairs = headers.items() if hasattr(headers, "items") else headers
    return next((value for key, value in pairs if key.lower() == name.lower()), None)


def _bytes(value):
    return value.encode() if isinstance(value, str) else bytes(value)


def sign(secret, timestamp, body):
    """The X-Jq-Signature value the master sends for `body` at `timestamp`."""
    mac = hmac.new(_bytes(secret), _bytes(str(timestamp)) + b"." + _bytes(body), hashlib.sha256)
    return "v1=" + mac.hexdigest()


def verify(secret, headers, body, tolerance=TOLERANCE):
    """True when `body` (bytes, as received) was signed with `secret` within `tolerance` seconds
    of now. False for a missing or malformed header, an old or future timestamp, a wrong
    signature, or a body changed on the way."""
    timestamp = _header(headers, "X-Jq-Timestamp")
    signature = _header(headers, "X-Jq-Signature")
    if not isinstance(timestamp, str) or not isinstance(signature, str):
        return False
    if not (timestamp.isascii() and timestamp.isdigit() and len(timestamp) <= 20):
        return False
    if abs(time.time() - int(timestamp)) > tolerance:
        return False
    # compare_digest takes as long whichever byte differs: the time does not leak the signature.
    return hmac.compare_digest(sign(secret, timestamp, body).encode(), signature.encode())
