// Push consumer with a deliver subject, acked explicitly.
import { jetstream, jetstreamManager, AckPolicy } from "@nats-io/jetstream";
import { run } from "./lib.mjs";

run(async (nc) => {
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: "PUSH", subjects: ["push.>"] });
  const js = jetstream(nc);
  for (let i = 1; i <= 5; i++) await js.publish("push.x", `m${i}`);
  const created = await jsm.consumers.add("PUSH", {
    durable_name: "pusher", deliver_subject: "deliver.pusher", ack_policy: AckPolicy.Explicit,
  });
  const c = await js.consumers.getPushConsumer("PUSH", "pusher");
  const got = [];
  const iter = await c.consume();
  for await (const m of iter) {
    got.push([m.seq, m.subject, m.string(), m.info.pending]);
    await m.ackAck();
    if (m.seq === 5) break;
  }
  const info = await jsm.consumers.info("PUSH", "pusher");
  return {
    config: created.config, got,
    after: { num_pending: info.num_pending, num_ack_pending: info.num_ack_pending, delivered: info.delivered, ack_floor: info.ack_floor },
  };
});
