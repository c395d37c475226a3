// Consumer pause and resume through the PAUSE API and pause_until on create.
import { jetstreamManager, AckPolicy } from "@nats-io/jetstream";
import { run, attempt } from "./lib.mjs";

run(async (nc) => {
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: "PAUSE", subjects: ["pause.>"] });
  await jsm.consumers.add("PAUSE", { durable_name: "p", ack_policy: AckPolicy.Explicit });
  const until = new Date(Date.now() + 3600_000);
  const r = {};
  r.pause = await attempt(async () => { const x = await jsm.consumers.pause("PAUSE", "p", until); return { paused: x.paused, has_until: !!x.pause_until }; });
  r.info_paused = await attempt(async () => { const ci = await jsm.consumers.info("PAUSE", "p"); return { paused: ci.paused === true, has_remaining: ci.pause_remaining > 0 }; });
  r.resume = await attempt(async () => { const x = await jsm.consumers.resume("PAUSE", "p"); return { paused: x.paused }; });
  r.created_paused = await attempt(async () => {
    const ci = await jsm.consumers.add("PAUSE", { durable_name: "q", ack_policy: AckPolicy.Explicit, pause_until: until.toISOString() });
    return { paused: ci.paused === true, has_remaining: ci.pause_remaining > 0 };
  });
  return r;
});
