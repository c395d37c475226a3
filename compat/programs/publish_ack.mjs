// JetStream publish: PubAcks, and deduplication by Nats-Msg-Id.
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { run, attempt } from "./lib.mjs";

run(async (nc) => {
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: "PUBACK", subjects: ["puback.>"], duplicate_window: 60_000_000_000 });
  const js = jetstream(nc);
  const acks = [];
  acks.push(await js.publish("puback.a", "one"));
  acks.push(await js.publish("puback.b", "two", { msgID: "id-1" }));
  acks.push(await js.publish("puback.b", "two again", { msgID: "id-1" }));
  acks.push(await js.publish("puback.c", "three", { msgID: "id-2" }));
  const noStream = await attempt(() => js.publish("nostream.x", "x", { timeout: 3000 }));
  const wrongStream = await attempt(() => js.publish("puback.a", "x", { expect: { streamName: "OTHER" } }));
  const si = await jsm.streams.info("PUBACK");
  return { acks, no_stream: noStream, wrong_stream: wrongStream, state: si.state };
});
