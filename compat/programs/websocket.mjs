// WebSocket: nats.js wsconnect to the server's websocket listener
// (NATS_WS_URL, the driver gives each server one): subscribe and publish,
// request-reply with a payload of many frames, a request nobody answers,
// and JetStream over the same connection (publish with acks, a pull
// consumer's next).
import { wsconnect } from "@nats-io/transport-node";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { runWith, attempt, te, td } from "./lib.mjs";

runWith(() => {
  const url = process.env.NATS_WS_URL;
  if (!url) throw new Error("NATS_WS_URL is not set");
  return wsconnect({ servers: url, timeout: 5000 });
}, async (nc) => {
  const got = [];
  const sub = nc.subscribe("compat.ws.>", { max: 2 });
  const done = (async () => {
    for await (const m of sub) got.push({ subject: m.subject, data: m.string() });
  })();
  const svc = nc.subscribe("compat.ws.svc");
  (async () => {
    for await (const m of svc) m.respond(te.encode(`${m.data.length}:` + td.decode(m.data.subarray(0, 3))));
  })();
  nc.publish("compat.ws.a", te.encode("one"));
  nc.publish("compat.ws.b", te.encode("two"));
  await done;
  const big = te.encode("abc" + "x".repeat(300000));
  const reply = await nc.request("compat.ws.svc", big, { timeout: 5000 });
  const none = await attempt(() => nc.request("compat.ws.nobody", te.encode("x"), { timeout: 5000 }));
  svc.unsubscribe();

  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: "COMPAT_WS", subjects: ["compat.wsjs.>"] });
  const js = jetstream(nc);
  const acks = [];
  for (const d of ["p1", "p2"]) {
    const pa = await js.publish("compat.wsjs.x", te.encode(d));
    acks.push({ stream: pa.stream, seq: pa.seq, duplicate: pa.duplicate });
  }
  await jsm.consumers.add("COMPAT_WS", { durable_name: "c", ack_policy: "explicit" });
  const c = await js.consumers.get("COMPAT_WS", "c");
  const fetched = [];
  for (let i = 0; i < 2; i++) {
    const m = await c.next({ expires: 5000 });
    fetched.push(m ? { seq: m.seq, data: m.string() } : null);
    m?.ack();
  }
  await jsm.streams.delete("COMPAT_WS");
  return { received: got, reply: td.decode(reply.data), no_responders: none, acks, fetched };
});
