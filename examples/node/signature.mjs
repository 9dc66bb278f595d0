// Checks that a request to a jqmaster worker comes from the master: signed dispatches.
//
// A worker registered with a `secret` (16-256 bytes) gets two more headers with every job:
//     X-Jq-Timestamp: 1764312000            (Unix seconds when the master sent it)
//     X-Jq-Signature: v1=<lower-case hex>   (HMAC-SHA256 with the secret over
//                                            timestamp + "." + the exact body bytes)
// verify() checks both, before the body is decoded:
//
//     import { verify } from "./signature.mjs";
//     if (!verify(secret, request.headers, body)) { /* answer 401, do not run the job */ }
//
// Only node:crypto; copy this file next to your worker.

import { createHmac, timingSafeEqual } from "node:crypto";

export const TOLERANCE = 300; // seconds: a timestamp further from our clock is refused

// The X-Jq-Signature value the master sends for `body` (a Buffer or Uint8Array) at `timestamp`.
export function sign(secret, timestamp, body) {
  return `v1=${createHmac("sha256", secret).update(`${timestamp}.`).update(body).digest("hex")}`;
}

// `headers`: Node's request.headers (lower-case names) or a fetch Headers object.
function header(headers, name) {
  return typeof headers.get === "function" ? headers.get(name) : headers[name.toLowerCase()];
}

// True when `body` (the bytes as received) was signed with `secret` within `tolerance` seconds
// of now. False for a missing or malformed header, an old or future timestamp, a wrong
// signature, or a body changed on the way.
export function verify(secret, headers, body, tolerance = TOLERANCE) {
  const timestamp = header(headers, "X-Jq-Timestamp");
  const signature = header(headers, "X-Jq-Signature");
  if (typeof timestamp !== "string" || typeof signature !== "string") return false;
  if (!/^[0-9]{1,20}$/.test(timestamp)) return false;
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > tolerance) return false;
  const expected = Buffer.from(sign(secret, timestamp, body));
  const given = Buffer.from(signature);
  // timingSafeEqual takes as long whichever byte differs: the time does not leak the signature.
  return expected.length === given.length && timingSafeEqual(expected, given);
}
