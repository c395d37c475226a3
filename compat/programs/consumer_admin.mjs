// Consumer add, list, info, delete, and a double ack on a consumer
// whose ack policy is none.
import { jetstream, jetstreamManager, AckPolicy } from "@nats-io/jetstream";
import { run, attempt } from "./lib.mjs";

run(async (nc) => {
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: "CADMIN", subjects: ["cadmin.>"] });
  const js = jetstream(nc);
  await js.publish("cadmin.a", "1");
  await jsm.consumers.add("CADMIN", { durable_name: "c1", ack_policy: AckPolicy.Explicit, filter_subject: "cadmin.a" });
  await jsm.consumers.add("CADMIN", { durable_name: "c2", ack_policy: AckPolicy.None });
  const r = {};
  r.listed = [];
  for await (const ci of jsm.consumers.list("CADMIN")) r.listed.push([ci.name, ci.config.ack_policy, ci.num_pending]);
  r.listed.sort();
  r.update = await attempt(async () => (await jsm.consumers.update("CADMIN", "c1", { description: "first" })).config.description);
  r.update_immutable = await attempt(() => jsm.consumers.update("CADMIN", "c1", { filter_subject: "cadmin.b", deliver_policy: "new" }));
  const c2 = await js.consumers.get("CADMIN", "c2");
  const m = await c2.next({ expires: 3000 });
  r.none_msg = m && [m.seq, m.string()];
  r.none_double_ack = m && await attempt(() => m.ackAck({ expect: 2000 }));
  if (r.none_double_ack?.message) r.none_double_ack.message = r.none_double_ack.message.replace(/\$JS\.ACK\.[^']*/, "<ack subject>");
  r.deleted = await jsm.consumers.delete("CADMIN", "c1");
  r.delete_again = await attempt(() => jsm.consumers.delete("CADMIN", "c1"));
  r.after = (await jsm.streams.info("CADMIN")).state.consumer_count;
  return r;
});
