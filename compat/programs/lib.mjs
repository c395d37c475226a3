// Shared helpers of the compat programs: connect to the server named by
// NATS_URL, describe errors and values in a server-neutral form, print the
// result as one JSON line and exit.
import { connect } from "@nats-io/transport-node";

export async function open() {
  const url = process.env.NATS_URL;
  if (!url) throw new Error("NATS_URL is not set");
  return connect({ servers: url, timeout: 5000 });
}

// err describes an error by what a client program can branch on: its class,
// message, and the JetStream API code and status when there is one.
export function err(e) {
  const out = { error: e?.name ?? "Error", message: e?.message ?? String(e) };
  if (typeof e?.apiError === "function") {
    const a = e.apiError();
    out.code = a.code;
    out.err_code = a.err_code;
  }
  return out;
}

// attempt runs fn and returns its value, or err(e) when it throws.
export async function attempt(fn) {
  try {
    return await fn();
  } catch (e) {
    return err(e);
  }
}

// Fields that change from run to run or from server to server.
const volatile = new Set([
  "created", "ts", "time", "timestamp", "first_ts", "last_ts", "mtime",
  "server_id", "server_name", "cluster", "version", "nuid", "pause_until",
  "pause_remaining", "last_active", "delivered_at", "js_domain", "_nats.ver",
]);

// norm drops volatile fields recursively and sorts object keys.
export function norm(v, depth = 0) {
  if (depth > 12) return "<deep>";
  if (Array.isArray(v)) return v.map((x) => norm(x, depth + 1));
  if (v instanceof Uint8Array) return new TextDecoder().decode(v);
  if (v instanceof Date) return "<date>";
  if (v && typeof v === "object" && Object.getPrototypeOf(v) !== Object.prototype && Object.getPrototypeOf(v) !== null) {
    return `<${v.constructor?.name ?? "object"}>`;
  }
  if (v && typeof v === "object") {
    const out = {};
    for (const k of Object.keys(v).sort()) {
      if (volatile.has(k) || v[k] === undefined) continue;
      out[k] = norm(v[k], depth + 1);
    }
    return out;
  }
  return v;
}

// run connects, calls body(nc) and prints its normalized result. A failure
// to connect or an uncaught error is printed as the result too, so the driver
// always gets one JSON line to compare.
export async function run(body) {
  return runWith(open, body);
}

// runWith is run with its own way of connecting (opener returns the
// connection), e.g. over the WebSocket listener.
export async function runWith(opener, body) {
  let nc;
  let result;
  try {
    nc = await opener();
    result = await body(nc);
  } catch (e) {
    result = { uncaught: err(e) };
  }
  if (nc) await nc.close().catch(() => {});
  process.stdout.write(JSON.stringify(norm(result)) + "\n");
  process.exit(0);
}

export const te = new TextEncoder();
export const td = new TextDecoder();
