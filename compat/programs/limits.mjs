// Stream limits: max messages per subject, discard new, max message size.
import { jetstream, jetstreamManager, DiscardPolicy } from "@nats-io/jetstream";
import { run, attempt } from "./lib.mjs";

run(async (nc) => {
  const jsm = await jetstreamManager(nc);
  const js = jetstream(nc);
  const r = {};
  await jsm.streams.add({ name: "PERSUBJ", subjects: ["persubj.>"], max_msgs_per_subject: 2 });
  for (let i = 1; i <= 6; i++) await js.publish(`persubj.${i % 2}`, `m${i}`);
  const s1 = (await jsm.streams.info("PERSUBJ")).state;
  r.per_subject = { messages: s1.messages, first_seq: s1.first_seq, last_seq: s1.last_seq };
  await jsm.streams.add({ name: "DISCNEW", subjects: ["discnew.>"], max_msgs: 2, discard: DiscardPolicy.New });
  r.disc = [];
  for (let i = 1; i <= 3; i++) r.disc.push(await attempt(() => js.publish("discnew.x", `m${i}`)));
  await jsm.streams.add({ name: "MSGSIZE", subjects: ["msgsize.>"], max_msg_size: 10 });
  r.small = await js.publish("msgsize.x", "small");
  r.too_big = await attempt(() => js.publish("msgsize.x", "this is longer than ten bytes"));
  await jsm.streams.add({ name: "MAXMSGS", subjects: ["maxmsgs.>"], max_msgs: 3 });
  for (let i = 1; i <= 5; i++) await js.publish("maxmsgs.x", `m${i}`);
  const s2 = (await jsm.streams.info("MAXMSGS")).state;
  r.max_msgs = { messages: s2.messages, first_seq: s2.first_seq, last_seq: s2.last_seq };
  return r;
});
