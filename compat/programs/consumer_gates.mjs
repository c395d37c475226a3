// Features nats.js 3.4.0's own tests gate on servers 2.12 and 2.14, used
// through nats.js: consumer reset (jsmconsumer_api reset), the
// "prioritized" priority policy, removing a stream's mirror by an update,
// message schedules' cancel form and subject sourcing, the direct consumer
// (jsm_direct's DirectConsumer over batched direct get), persist_mode, and
// durable sourcing (ADR-60: ack_policy flow_control consumers named by a
// mirror and a source).
//
// nats.js refuses jsm.consumers.reset() on a server announcing less than
// 2.14.0 (its Features table). Where the server announces less, this
// program sends the same request the client would ($JS.API.CONSUMER.RESET,
// empty body or {"seq": N}) through the manager's raw _request, so both
// servers answer the same request whatever version they announce.
import { createRequire } from "node:module";
import { jetstream, jetstreamManager, AckPolicy, DeliverPolicy } from "@nats-io/jetstream";
import { nanos } from "@nats-io/nats-core";
import { run, attempt } from "./lib.mjs";

// DirectConsumer is not exported by the package; load its module by path.
const require = createRequire(import.meta.url);
const { DirectConsumer, DirectStreamAPIImpl } = require(
  new URL("../node_modules/@nats-io/jetstream/lib/jsm_direct.js", import.meta.url).pathname,
);

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// eventually polls fn until it returns a truthy value (at most ~10s).
async function eventually(fn) {
  for (let i = 0; i < 200; i++) {
    const v = await fn();
    if (v) return v;
    await sleep(50);
  }
  return null;
}

// reset resets a consumer through nats.js, or through the same request sent
// raw when nats.js would refuse the server's announced version.
async function reset(nc, jsm, stream, name, seq) {
  if (nc.features.get("js_consumer_reset").ok) return jsm.consumers.reset(stream, name, seq);
  const body = typeof seq === "number" ? { seq } : undefined;
  return jsm.consumers._request(`$JS.API.CONSUMER.RESET.${stream}.${name}`, body);
}

const pos = (r) => ({
  reset_seq: r.reset_seq, delivered: [r.delivered.consumer_seq, r.delivered.stream_seq],
  ack_floor: [r.ack_floor.consumer_seq, r.ack_floor.stream_seq],
  num_ack_pending: r.num_ack_pending, num_pending: r.num_pending, name: r.name, stream_name: r.stream_name,
});

// fetchInfo fetches and acks, returning [stream seq, consumer seq, delivery count] each.
async function fetchInfo(c, opts) {
  const out = [];
  for await (const m of await c.fetch(opts)) {
    out.push([m.seq, m.info.deliverySequence, m.info.deliveryCount]);
    await m.ackAck();
  }
  return out;
}

run(async (nc) => {
  const jsm = await jetstreamManager(nc);
  const js = jetstream(nc);
  const r = {};

  // Consumer reset (2.14): back to the ack floor + 1, to a sequence, the
  // refusals by deliver policy.
  r.reset = await attempt(async () => {
    await jsm.streams.add({ name: "RESET", subjects: ["reset.>"] });
    for (let i = 1; i <= 5; i++) await js.publish("reset.a", `m${i}`);
    await jsm.consumers.add("RESET", { durable_name: "r", ack_policy: AckPolicy.Explicit });
    const c = await js.consumers.get("RESET", "r");
    const first = [];
    for await (const m of await c.fetch({ max_messages: 3, expires: 2000 })) {
      first.push(m.seq);
      if (m.seq === 1) await m.ackAck();
    }
    const toFloor = pos(await reset(nc, jsm, "RESET", "r"));
    const again = await fetchInfo(c, { max_messages: 4, expires: 2000 });
    const toSeq = pos(await reset(nc, jsm, "RESET", "r", 4));
    const fromSeq = await fetchInfo(c, { max_messages: 2, expires: 2000 });
    await jsm.consumers.add("RESET", { durable_name: "new", ack_policy: AckPolicy.Explicit, deliver_policy: DeliverPolicy.New });
    await jsm.consumers.add("RESET", { durable_name: "start", ack_policy: AckPolicy.Explicit, deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: 3 });
    return {
      first, to_floor: toFloor, again, to_seq: toSeq, from_seq: fromSeq,
      new_with_seq: await attempt(() => reset(nc, jsm, "RESET", "new", 2)),
      new_empty: await attempt(async () => (await reset(nc, jsm, "RESET", "new")).reset_seq),
      start_below: await attempt(() => reset(nc, jsm, "RESET", "start", 2)),
      start_at: await attempt(async () => pos(await reset(nc, jsm, "RESET", "start", 3))),
    };
  });

  // The prioritized policy (2.12): of the waiting pulls, the lowest
  // priority number is served first.
  r.prioritized = await attempt(async () => {
    await jsm.streams.add({ name: "PRIO", subjects: ["prio.>"] });
    const ci = await jsm.consumers.add("PRIO", { durable_name: "p", ack_policy: AckPolicy.Explicit, priority_groups: ["g"], priority_policy: "prioritized" });
    const c = await js.consumers.get("PRIO", "p");
    const low = fetchInfo(c, { max_messages: 1, expires: 5000, group: "g", priority: 7 });
    const high = fetchInfo(c, { max_messages: 1, expires: 5000, group: "g", priority: 1 });
    const waiting = await eventually(async () => (await jsm.consumers.info("PRIO", "p")).num_waiting === 2);
    await js.publish("prio.a", "first");
    const gotHigh = await high;
    await js.publish("prio.a", "second");
    const gotLow = await low;
    return { policy: ci.config.priority_policy, groups: ci.config.priority_groups, both_waiting: !!waiting, priority_1: gotHigh, priority_7: gotLow };
  });

  // Removing a mirror by an update (2.12) promotes it to a plain stream.
  r.remove_mirror = await attempt(async () => {
    await jsm.streams.add({ name: "MA", subjects: ["ma"] });
    await js.publish("ma", "one");
    const added = await jsm.streams.add({ name: "MB", mirror: { name: "MA", subject_transforms: [{ src: "ma", dest: "mb" }] } });
    const copied = await eventually(async () => (await jsm.streams.info("MB")).state.messages === 1);
    const si = await jsm.streams.update("MB", { mirror: undefined });
    const ack = await js.publish("MB", "own");
    return {
      had_mirror: !!added.config.mirror, copied: !!copied, mirror_after: si.config.mirror ?? null,
      subjects_after: si.config.subjects, own_publish: [ack.stream, ack.seq],
      add_back: await attempt(() => jsm.streams.update("MB", { mirror: { name: "MA" }, subjects: [] })),
    };
  });

  // Message schedules (2.14 in nats.js's tests): subject sourcing and the
  // cancel form (Nats-Scheduler + Nats-Schedule-Next: purge).
  r.schedules = await attempt(async () => {
    await jsm.streams.add({ name: "SCHED", allow_msg_schedules: true, allow_msg_ttl: true, subjects: ["sched.>", "tgt.>", "stop.>", "data.>"] });
    await js.publish("data.last", "sourced-payload");
    await js.publish("sched.source", "", { schedule: { specification: { every: "1s" }, target: "tgt.sourced", source: "data.last", ttl: "5m" } });
    const sourced = await eventually(async () => attempt(() => jsm.streams.getMessage("SCHED", { last_by_subj: "tgt.sourced" })).then((m) => m?.seq && m));
    const cancelAck = await js.publish("stop.source", "stopped", { cancelSchedule: { scheduleSubject: "sched.source" } });
    await js.publish("sched.cancel", "tick", { schedule: { specification: { every: "1s" }, target: "tgt.cancelled", ttl: "5m" } });
    await js.publish("stop.canceled", "stopped", { cancelSchedule: { scheduleSubject: "sched.cancel" } });
    // getMessage answers null for a message not found.
    const gone = async (subj) => {
      const m = await attempt(() => jsm.streams.getMessage("SCHED", { last_by_subj: subj }));
      return m === null ? "gone" : m.err_code ?? "still there";
    };
    return {
      sourced: sourced && { data: sourced.string(), scheduler: sourced.header.get("Nats-Scheduler"), ttl: sourced.header.get("Nats-TTL") },
      cancel_ack_stream: cancelAck.stream,
      source_schedule_after_cancel: await gone("sched.source"),
      cancelled_schedule: await gone("sched.cancel"),
      cancel_same_subject: await attempt(() => js.publish("sched.x", "", { cancelSchedule: { scheduleSubject: "sched.x" } })),
    };
  });

  // The direct consumer (2.12 in nats.js's tests): next, fetch with
  // pending, to the end.
  r.direct_consumer = await attempt(async () => {
    await jsm.streams.add({ name: "DC", subjects: ["dc.a", "dc.b"], allow_direct: true });
    for (let i = 0; i < 20; i++) await js.publish(i % 3 ? "dc.a" : "dc.b", `${i}`);
    const dc = new DirectConsumer("DC", new DirectStreamAPIImpl(nc), { seq: 0 });
    const nexts = [];
    for (let i = 0; i < 3; i++) nexts.push((await dc.next())?.seq);
    const batch = [];
    for await (const m of await dc.fetch({ batch: 5 })) batch.push([m.seq, m.subject, m.pending]);
    const rest = [];
    for await (const m of await dc.fetch()) rest.push([m.seq, m.pending]);
    return { nexts, batch, rest, after_end: (await dc.next()) ?? null };
  });

  // persist_mode (2.12): async is kept and needs API level 2; an update
  // cannot change it.
  r.persist_mode = await attempt(async () => {
    const a = await jsm.streams.add({ name: "PERSIST_A", subjects: ["pa"], persist_mode: "default" });
    const b = await jsm.streams.add({ name: "PERSIST_B", subjects: ["pb"], persist_mode: "async" });
    return {
      default_mode: a.config.persist_mode ?? null, default_level: a.config.metadata?.["_nats.req.level"],
      async_mode: b.config.persist_mode, async_level: b.config.metadata?.["_nats.req.level"],
      update: await attempt(() => jsm.streams.update("PERSIST_B", { persist_mode: "default" })),
    };
  });
  // Durable sourcing (2.14, ADR-60), as nats.js's jsm test does it.
  r.durable_sourcing = await attempt(async () => {
    await jsm.streams.add({ name: "DS_O", subjects: ["dso.>"] });
    const fc = { ack_policy: AckPolicy.FlowControl, idle_heartbeat: nanos(1000) };
    const c = await jsm.consumers.add("DS_O", { durable_name: "C", deliver_subject: "deliver.mirror", ...fc });
    await jsm.consumers.add("DS_O", { durable_name: "C2", deliver_subject: "deliver.source", ...fc });
    const mi = await jsm.streams.add({ name: "DS_M", mirror: { name: "DS_O", consumer: { name: "C", deliver_subject: "deliver.mirror" } } });
    const si = await jsm.streams.add({ name: "DS_S", sources: [{ name: "DS_O", consumer: { name: "C2", deliver_subject: "deliver.source" } }] });
    for (const s of ["dso.a", "dso.b", "dso.c"]) await js.publish(s, s);
    const copied = await eventually(async () =>
      (await jsm.streams.info("DS_M")).state.messages === 3 && (await jsm.streams.info("DS_S")).state.messages === 3);
    const bad = (name, cfg) => attempt(() => jsm.streams.add({ name, ...cfg }));
    return {
      consumer: { ack_policy: c.config.ack_policy, flow_control: c.config.flow_control, idle_heartbeat: c.config.idle_heartbeat, req_level: c.config.metadata?.["_nats.req.level"] },
      mirror_consumer: mi.config.mirror?.consumer, source_consumer: si.config.sources?.[0].consumer, copied: !!copied,
      mirror_subjects: (await jsm.streams.getMessage("DS_M", { seq: 3 }))?.subject,
      pull_refused: await attempt(() => jsm.consumers.add("DS_O", { durable_name: "P", ...fc })),
      mirror_empty_name: await bad("DS_E1", { mirror: { name: "DS_O", consumer: { name: "", deliver_subject: "d.x" } } }),
      mirror_empty_deliver: await bad("DS_E2", { mirror: { name: "DS_O", consumer: { name: "C", deliver_subject: "" } } }),
      source_empty_name: await bad("DS_E3", { sources: [{ name: "DS_O", consumer: { name: "", deliver_subject: "d.x" } }] }),
      source_empty_deliver: await bad("DS_E4", { sources: [{ name: "DS_O", consumer: { name: "C", deliver_subject: "" } }] }),
    };
  });
  return r;
});
