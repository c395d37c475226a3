// The features nats.js 3.4.0 gates between the 2.11 of version_gates.mjs
// and the 2.14.0 / API level 4 jetwal announces: fast batch publish ("fast
// ingest", startFastIngest, API level 4 in INFO), the object store's fast
// put (Objm with allowBatched), and Nats-Required-Api-Level on stream and
// consumer requests (sendRequiredApiLevel). Values that differ by server
// (the batch's nuid, "_nats.level", api_lvl 4 vs 5) are reduced to what a
// client branches on.
import { jetstream, jetstreamManager, AckPolicy } from "@nats-io/jetstream";
import { startFastIngest } from "@nats-io/jetstream/internal";
import { Objm } from "@nats-io/obj";
import { headers } from "@nats-io/transport-node";
import { run, attempt, te, td } from "./lib.mjs";

const pubAck = (a) => a && { stream: a.stream, seq: a.seq, count: a.count, batch: typeof a.batch === "string" };

run(async (nc) => {
  const jsm = await jetstreamManager(nc);
  const r = {};
  r.api_lvl_at_least_4 = (nc.info?.api_lvl ?? 0) >= 4;

  await jsm.streams.add({ name: "FAST", subjects: ["fast.>"], allow_batched: true });
  await jsm.streams.add({ name: "PLAIN", subjects: ["plain.>"] });
  r.stream_req_level = (await jsm.streams.info("FAST")).config.metadata?.["_nats.req.level"];

  // A batch with an ack every 2 messages: every add resolves (the client
  // waits on flow acks), the commit's PubAck counts the batch.
  r.fast = await attempt(async () => {
    const fi = await startFastIngest(nc, "fast.a", "m1", { ackInterval: 2 });
    const adds = [];
    for (let i = 2; i <= 20; i++) adds.push((await fi.add("fast.a", `m${i}`)).batchSeq);
    const ping = await fi.ping();
    const ack = await fi.last("fast.b", "m21");
    return { adds: adds.length, last_add: adds.at(-1), ping_seq: ping.batchSeq, ack: pubAck(ack), done: pubAck(await fi.done()) };
  });

  // End of batch: the commit is not stored.
  r.fast_eob = await attempt(async () => {
    const fi = await startFastIngest(nc, "fast.c", "e1", {});
    await fi.add("fast.c", "e2");
    return pubAck(await fi.end());
  });
  r.stored = (await jsm.streams.info("FAST")).state.messages;

  // A refused message inside a batch ("err") closes it with the API error.
  r.fast_err = await attempt(async () => {
    const fi = await startFastIngest(nc, "fast.d", "x1", {});
    await fi.add("fast.d", "x2", { expect: { lastSequence: 1 } });
    return pubAck(await fi.last("fast.d", "x3"));
  });

  // Expected last sequence on the first message: met, the batch goes on;
  // missed, the first message is refused and the batch closed.
  r.fast_expect = await attempt(async () => {
    await jsm.streams.add({ name: "EXP", subjects: ["exp"], allow_batched: true });
    const js = jetstream(nc);
    await js.publish("exp", "0");
    const fi = await startFastIngest(nc, "exp", "1", { allowGaps: false, expect: { lastSequence: 1 } });
    await fi.add("exp", "2");
    const ok = pubAck(await fi.last("exp", "3"));
    const bad = await startFastIngest(nc, "exp", "x", { expect: { lastSequence: 99 } });
    // Rejected either with the API error or as "batch closed", depending
    // on whether the refusal arrives before the call: only that it is.
    const refused = await bad.last("exp", "y").then(() => false, () => true);
    return { ok, refused, messages: (await jsm.streams.info("EXP")).state.messages };
  });

  // Refusals before a batch exists.
  r.fast_disabled = await attempt(() => startFastIngest(nc, "plain.a", "p", {}).then(() => "started"));
  r.fast_bad_prefix = await attempt(() => startFastIngest(nc, "fast.a", "p", { inboxPrefix: "a b" }).then(() => "started"));

  // The object store's fast put: chunks go through a fast batch, the
  // metadata is its last message.
  const objm = new Objm(nc);
  r.obj_fast = await attempt(async () => {
    const os = await objm.create("fastobj", { allowBatched: true });
    const body = te.encode("0123456789".repeat(50));
    const info = await os.putBlob({ name: "o", options: { max_chunk_size: 64 } }, body);
    const back = td.decode(await os.getBlob("o"));
    const si = await jsm.streams.info("OBJ_fastobj");
    return {
      chunks: info.chunks, size: info.size, digest: info.digest, same: back === td.decode(body),
      allow_batched: si.config.allow_batched, req_level: si.config.metadata?.["_nats.req.level"],
      messages: si.state.messages,
    };
  });
  r.obj_fast_big = await attempt(async () => {
    const os = await objm.open("fastobj", { check: true, allowBatched: true });
    const body = new Uint8Array(300 * 1024).map((_, i) => i % 251);
    const info = await os.putBlob({ name: "big" }, body);
    const back = await os.getBlob("big");
    return { chunks: info.chunks, size: info.size, digest: info.digest, same: back.length === body.length && back.every((b, i) => b === body[i]) };
  });
  r.obj_fast_deferred = await attempt(async () => {
    await objm.create("lateobj");
    const os = await objm.open("lateobj", { check: false, allowBatched: true });
    return await os.putBlob({ name: "x" }, te.encode("late")).then(() => "stored");
  });
  r.obj_fast_open_plain = await attempt(async () => {
    await objm.create("plainobj");
    await objm.open("plainobj", { check: true, allowBatched: true });
    return "opened";
  });

  // Nats-Required-Api-Level: the client sends the level a config needs.
  r.required_level = await attempt(async () => {
    const jsmL = await jetstreamManager(nc, { sendRequiredApiLevel: true });
    const si = await jsmL.streams.add({ name: "LVL", subjects: ["lvl.>"], allow_batched: true, allow_msg_ttl: true });
    const ci = await jsmL.consumers.add("LVL", { durable_name: "pg", ack_policy: AckPolicy.Explicit, priority_policy: "overflow", priority_groups: ["g"] });
    const up = await jsmL.streams.update("LVL", { ...si.config, allow_batched: false });
    return {
      stream_req: si.config.metadata?.["_nats.req.level"], consumer_req: ci.config.metadata?.["_nats.req.level"],
      updated_req: up.config.metadata?.["_nats.req.level"],
    };
  });
  r.required_level_too_high = await attempt(async () => {
    const h = headers();
    h.set("Nats-Required-Api-Level", "99");
    const m = await nc.request("$JS.API.STREAM.CREATE.HIGH", te.encode(JSON.stringify({ name: "HIGH", subjects: ["high"] })), { headers: h });
    const resp = JSON.parse(td.decode(m.data));
    return { type: resp.type, error: resp.error };
  });

  // ---- Consumer features of 2.14 (branch consumerfeat adds its own
  // program): consumer reset (JS_CONSUMER_RESET), mirror and source
  // consumers (ADR-60, ack_policy flow_control), removing a mirror, the
  // schedule cancel and subject-sourcing forms, direct consumers and the
  // "prioritized" priority policy are covered there, not here. ----

  return r;
});
