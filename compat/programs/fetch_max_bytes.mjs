// Pull fetch bounded by bytes rather than by message count, twice; how the
// request ends (nats.js throws on the 409 status) is part of the result.
import { jetstream, jetstreamManager, AckPolicy } from "@nats-io/jetstream";
import { run, err } from "./lib.mjs";

run(async (nc) => {
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: "MAXBYTES", subjects: ["maxbytes.>"] });
  const js = jetstream(nc);
  const payload = "x".repeat(100);
  for (let i = 1; i <= 50; i++) await js.publish("maxbytes.x", payload);
  await jsm.consumers.add("MAXBYTES", { durable_name: "b", ack_policy: AckPolicy.Explicit });
  const c = await js.consumers.get("MAXBYTES", "b");
  const batches = [];
  for (let round = 0; round < 2; round++) {
    const got = { seqs: [] };
    const it = await c.fetch({ max_bytes: 4096, expires: 3000 });
    try {
      for await (const m of it) {
        got.seqs.push(m.seq);
        m.ack();
      }
    } catch (e) {
      got.ended_by = err(e);
    }
    batches.push(got);
  }
  await nc.flush();
  return { batches };
});
