// Optimistic concurrency headers: expected last sequence, last subject
// sequence and last message id.
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { run, attempt } from "./lib.mjs";

run(async (nc) => {
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: "EXPECT", subjects: ["expect.>"] });
  const js = jetstream(nc);
  const r = {};
  r.first = await js.publish("expect.a", "1", { expect: { lastSequence: 0 }, msgID: "m1" });
  r.ok = await js.publish("expect.b", "2", { expect: { lastSequence: 1 } });
  r.wrong_seq = await attempt(() => js.publish("expect.a", "3", { expect: { lastSequence: 1 } }));
  r.subject_ok = await js.publish("expect.a", "4", { expect: { lastSubjectSequence: 1 } });
  r.subject_wrong = await attempt(() => js.publish("expect.a", "5", { expect: { lastSubjectSequence: 1 } }));
  r.msgid_wrong = await attempt(() => js.publish("expect.c", "6", { expect: { lastMsgID: "nope" } }));
  r.state = (await jsm.streams.info("EXPECT")).state;
  return r;
});
