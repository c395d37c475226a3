// Ordered consumer: consume and fetch every message in order.
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { run } from "./lib.mjs";

run(async (nc) => {
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: "ORDERED", subjects: ["ordered.>"] });
  const js = jetstream(nc);
  for (let i = 1; i <= 20; i++) await js.publish(`ordered.${i % 3}`, `m${i}`);
  const c = await js.consumers.get("ORDERED", { filter_subjects: ["ordered.1", "ordered.2"] });
  const consumed = [];
  const iter = await c.consume({ max_messages: 5 });
  for await (const m of iter) {
    consumed.push([m.seq, m.subject, m.string(), m.info.pending]);
    if (m.info.pending === 0) break;
  }
  const c2 = await js.consumers.get("ORDERED", { opt_start_seq: 15 });
  const fetched = [];
  const batch = await c2.fetch({ max_messages: 10, expires: 2000 });
  for await (const m of batch) fetched.push([m.seq, m.string()]);
  return { consumed, fetched };
});
