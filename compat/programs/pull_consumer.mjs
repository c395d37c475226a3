// Durable pull consumer: fetch, next and consume with ack, nak and term.
import { jetstream, jetstreamManager, AckPolicy } from "@nats-io/jetstream";
import { run, attempt } from "./lib.mjs";

function consumerView(ci) {
  return {
    config: ci.config, num_pending: ci.num_pending, num_ack_pending: ci.num_ack_pending,
    num_redelivered: ci.num_redelivered, num_waiting: ci.num_waiting,
    delivered: ci.delivered, ack_floor: ci.ack_floor,
  };
}

run(async (nc) => {
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: "PULL", subjects: ["pull.>"] });
  const js = jetstream(nc);
  for (let i = 1; i <= 10; i++) await js.publish("pull.x", `m${i}`);
  const created = await jsm.consumers.add("PULL", { durable_name: "work", ack_policy: AckPolicy.Explicit, ack_wait: 30_000_000_000 });
  const c = await js.consumers.get("PULL", "work");
  const fetched = [];
  const batch = await c.fetch({ max_messages: 4, expires: 3000 });
  for await (const m of batch) {
    fetched.push([m.seq, m.string(), m.info.deliveryCount]);
    if (m.seq === 2) m.nak(); else await m.ackAck();
  }
  const next = await c.next({ expires: 3000 });
  const nextView = next && [next.seq, next.string(), next.info.deliveryCount];
  if (next) await next.ackAck();
  const consumed = [];
  const iter = await c.consume({ max_messages: 3 });
  for await (const m of iter) {
    consumed.push([m.seq, m.string()]);
    if (m.seq === 9) m.term(); else m.ack();
    if (m.seq === 10) break;
  }
  await nc.flush();
  let info = await c.info();
  for (let i = 0; i < 50 && info.num_ack_pending > 0; i++) {
    await new Promise((r) => setTimeout(r, 100));
    info = await c.info();
  }
  const empty = await c.next({ expires: 1000 });
  const missing = await attempt(() => js.consumers.get("PULL", "nope"));
  return { created: consumerView(created), fetched, next: nextView, consumed, info: consumerView(info), empty_next: empty, missing };
});
